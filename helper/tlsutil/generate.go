package tlsutil

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CAOptions describe a certificate authority to make.
type CAOptions struct {
	// CommonName names the CA; empty means "Drover Agent CA <serial>".
	CommonName string
	// Days the CA is valid for; zero means DefaultCADays.
	Days int
	// Now is when validity starts (less a minute for clock skew); zero
	// means the current time.
	Now time.Time
}

// CertOptions describe a certificate to sign with a CA.
type CertOptions struct {
	// CACert and CAKey are the PEM certificate and key of the signing CA.
	CACert, CAKey []byte
	// CommonName is the certificate's subject; DNSNames and IPAddresses
	// its subject alternative names, which peers check.
	CommonName  string
	DNSNames    []string
	IPAddresses []net.IP
	// ExtKeyUsage says what the certificate may do: serve TLS, act as a
	// TLS client, or both. Empty means both.
	ExtKeyUsage []x509.ExtKeyUsage
	// Days the certificate is valid for; zero means DefaultCertDays.
	Days int
	// Now is when validity starts (less a minute); zero means now.
	Now time.Time
}

// Validity defaults, as Nomad's: a CA for five years, a certificate for one.
const (
	DefaultCADays   = 5 * 365
	DefaultCertDays = 365
)

// GenerateCA makes a self-signed CA with an ECDSA P-256 key and returns
// its certificate and key in PEM.
func GenerateCA(o CAOptions) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	name := o.CommonName
	if name == "" {
		name = "Drover Agent CA " + serial.String()
	}
	start, end := validity(o.Now, o.Days, DefaultCADays)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Drover"}},
		NotBefore:             start,
		NotAfter:              end,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		SubjectKeyId:          keyID(&key.PublicKey),
	}
	return sign(tmpl, tmpl, key, key, "CA certificate")
}

// GenerateCert makes a certificate with an ECDSA P-256 key signed by the
// CA in o, and returns it and its key in PEM.
func GenerateCert(o CertOptions) (certPEM, keyPEM []byte, err error) {
	ca, caKey, err := parseCA(o.CACert, o.CAKey)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	usage := o.ExtKeyUsage
	if len(usage) == 0 {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	start, end := validity(o.Now, o.Days, DefaultCertDays)
	if end.After(ca.NotAfter) {
		// A certificate cannot outlive the CA that vouches for it.
		end = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: o.CommonName},
		DNSNames:              o.DNSNames,
		IPAddresses:           o.IPAddresses,
		NotBefore:             start,
		NotAfter:              end,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           usage,
		BasicConstraintsValid: true,
		SubjectKeyId:          keyID(&key.PublicKey),
	}
	return sign(tmpl, ca, key, caKey, "certificate")
}

// sign makes the certificate tmpl describes for key, signed by signer as
// parent, and returns it and key in PEM; what names it in an error.
func sign(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer, what string) (certPEM, keyPEM []byte, err error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("signing %s: %w", what, err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// parseCA reads a CA certificate and its private key from PEM and checks
// they belong together.
func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, errors.New("the CA file holds no PEM certificate")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the CA certificate: %w", err)
	}
	if !ca.IsCA {
		return nil, nil, errors.New("the CA file's certificate is not a CA (it cannot sign certificates)")
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, nil, errors.New("the CA key file holds no PEM key")
	}
	var key any
	switch kb.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(kb.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(kb.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(kb.Bytes)
	default:
		return nil, nil, fmt.Errorf("the CA key file holds a %q block, not a private key", kb.Type)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the CA key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("the CA key cannot sign")
	}
	pub, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		return nil, nil, err
	}
	caPub, err := x509.MarshalPKIXPublicKey(ca.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(pub, caPub) {
		return nil, nil, errors.New("the CA key does not belong to the CA certificate")
	}
	return ca, signer, nil
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number: %w", err)
	}
	return serial, nil
}

func validity(now time.Time, days, def int) (time.Time, time.Time) {
	if now.IsZero() {
		now = time.Now()
	}
	if days == 0 {
		days = def
	}
	return now.Add(-time.Minute).UTC(), now.AddDate(0, 0, days).UTC()
}

// keyID is the subject key identifier of pub: a hash of its encoding.
func keyID(pub *ecdsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return sum[:20]
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

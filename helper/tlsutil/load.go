package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"time"
)

// material is one consistent load of the files a Config names. It is
// never changed after it is built; a reload builds a new one.
type material struct {
	cert tls.Certificate
	pool *x509.CertPool
	// caFile and certFile are kept for messages.
	caFile, certFile string
	minVersion       uint16

	// rpcServer and httpsServer are built once per load, so a handshake
	// costs no allocation for its config.
	rpcServer   *tls.Config
	httpsServer *tls.Config
}

// loadMaterial reads and checks the files of c. now is the time the
// certificate must be valid at. Errors name the file and the setting.
func loadMaterial(c Config, now time.Time) (*material, error) {
	minVersion, err := c.minVersion()
	if err != nil {
		return nil, err
	}
	pool, err := loadCAFile(c.CAFile)
	if err != nil {
		return nil, err
	}
	certPEM, err := os.ReadFile(c.CertFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %q cannot be read: %w", c.CertFile, err)
	}
	keyPEM, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.key_file %q cannot be read: %w", c.KeyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %q and tls.key_file %q are not a certificate and its key: %w", c.CertFile, c.KeyFile, err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("tls.cert_file %q: %w", c.CertFile, err)
		}
		cert.Leaf = leaf
	}
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if ic, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(ic)
		}
	}
	_, err = leaf.Verify(x509.VerifyOptions{
		Roots: pool, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %q is not usable with tls.ca_file %q (valid %s to %s): %w",
			c.CertFile, c.CAFile, leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), err)
	}
	m := &material{cert: cert, pool: pool, caFile: c.CAFile, certFile: c.CertFile, minVersion: minVersion}
	m.rpcServer = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   minVersion,
		// Without tickets every connection is verified against the CA
		// in use when it starts, not the one of an earlier session.
		SessionTicketsDisabled: true,
	}
	m.httpsServer = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.NoClientCert,
		MinVersion:   minVersion,
		NextProtos:   []string{"h2", "http/1.1"},
	}
	if c.VerifyHTTPSClient {
		m.httpsServer.ClientAuth = tls.RequireAndVerifyClientCert
		m.httpsServer.SessionTicketsDisabled = true
	}
	return m, nil
}

// loadCAFile reads every certificate in a PEM file into a pool.
func loadCAFile(path string) (*x509.CertPool, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls.ca_file %q cannot be read: %w", path, err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := buf; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file %q holds a certificate that cannot be parsed: %w", path, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("tls.ca_file %q holds no PEM certificate (expected a \"-----BEGIN CERTIFICATE-----\" block)", path)
	}
	return pool, nil
}

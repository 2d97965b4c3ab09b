package api

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Environment variables for TLS, read by DefaultConfig. As for the
// address, Drover's names win over Nomad's.
const (
	EnvCACert        = "DROVER_CACERT"
	EnvCAPath        = "DROVER_CAPATH"
	EnvClientCert    = "DROVER_CLIENT_CERT"
	EnvClientKey     = "DROVER_CLIENT_KEY"
	EnvTLSServerName = "DROVER_TLS_SERVER_NAME"
	EnvSkipVerify    = "DROVER_SKIP_VERIFY"

	NomadEnvCACert        = "NOMAD_CACERT"
	NomadEnvCAPath        = "NOMAD_CAPATH"
	NomadEnvClientCert    = "NOMAD_CLIENT_CERT"
	NomadEnvClientKey     = "NOMAD_CLIENT_KEY"
	NomadEnvTLSServerName = "NOMAD_TLS_SERVER_NAME"
	NomadEnvSkipVerify    = "NOMAD_SKIP_VERIFY"
)

// TLSConfig says how to talk to an agent whose API speaks HTTPS. It has
// the shape of Nomad's api.TLSConfig. A zero TLSConfig uses the system's
// trusted CAs and presents no certificate.
type TLSConfig struct {
	// CACert is a PEM file of the CA that signed the agent's certificate;
	// CAPath a directory of such files (used when CACert is empty);
	// CACertPEM the PEM itself (used before either).
	CACert    string
	CAPath    string
	CACertPEM []byte

	// ClientCert and ClientKey are the PEM files of the certificate to
	// present (an agent with tls.verify_https_client requires one);
	// ClientCertPEM and ClientKeyPEM the PEM itself.
	ClientCert    string
	ClientCertPEM []byte
	ClientKey     string
	ClientKeyPEM  []byte

	// TLSServerName is the name the agent's certificate must carry, when
	// it differs from the address's host.
	TLSServerName string

	// Insecure skips checking the agent's certificate. It is for
	// debugging only: anyone on the path can then read and change the
	// traffic, the token included.
	Insecure bool
}

// IsEmpty reports whether t asks for nothing beyond the defaults.
func (t *TLSConfig) IsEmpty() bool {
	return t == nil || (t.CACert == "" && t.CAPath == "" && len(t.CACertPEM) == 0 && t.ClientCert == "" &&
		len(t.ClientCertPEM) == 0 && t.ClientKey == "" && len(t.ClientKeyPEM) == 0 && t.TLSServerName == "" && !t.Insecure)
}

// tlsFromEnv reads the TLS environment variables.
func tlsFromEnv(first func(...string) string) *TLSConfig {
	t := &TLSConfig{
		CACert:        first(EnvCACert, NomadEnvCACert),
		CAPath:        first(EnvCAPath, NomadEnvCAPath),
		ClientCert:    first(EnvClientCert, NomadEnvClientCert),
		ClientKey:     first(EnvClientKey, NomadEnvClientKey),
		TLSServerName: first(EnvTLSServerName, NomadEnvTLSServerName),
	}
	if v := first(EnvSkipVerify, NomadEnvSkipVerify); v != "" {
		t.Insecure, _ = strconv.ParseBool(v)
	}
	return t
}

// withDefaults fills t's unset fields from env.
func (t *TLSConfig) withDefaults(env *TLSConfig) *TLSConfig {
	out := TLSConfig{}
	if t != nil {
		out = *t
	}
	if out.CACert == "" && out.CAPath == "" && len(out.CACertPEM) == 0 {
		out.CACert, out.CAPath = env.CACert, env.CAPath
	}
	if out.ClientCert == "" && len(out.ClientCertPEM) == 0 {
		out.ClientCert = env.ClientCert
	}
	if out.ClientKey == "" && len(out.ClientKeyPEM) == 0 {
		out.ClientKey = env.ClientKey
	}
	if out.TLSServerName == "" {
		out.TLSServerName = env.TLSServerName
	}
	out.Insecure = out.Insecure || env.Insecure
	return &out
}

// build makes the *tls.Config t describes. Errors name the setting, its
// flag and its environment variable, and the file.
func (t *TLSConfig) build() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.TLSServerName, InsecureSkipVerify: t.Insecure}
	switch {
	case len(t.CACertPEM) > 0:
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(t.CACertPEM) {
			return nil, errors.New("TLS CA (CACertPEM) holds no PEM certificate")
		}
	case t.CACert != "":
		pool := x509.NewCertPool()
		if err := addPEMFile(pool, t.CACert); err != nil {
			return nil, fmt.Errorf("TLS CA certificate (-ca-cert, %s): %w", NomadEnvCACert, err)
		}
		cfg.RootCAs = pool
	case t.CAPath != "":
		pool, err := loadCAPath(t.CAPath)
		if err != nil {
			return nil, fmt.Errorf("TLS CA directory (-ca-path, %s): %w", NomadEnvCAPath, err)
		}
		cfg.RootCAs = pool
	}
	certPEM, keyPEM := t.ClientCertPEM, t.ClientKeyPEM
	var err error
	if len(certPEM) == 0 && t.ClientCert != "" {
		if certPEM, err = os.ReadFile(t.ClientCert); err != nil {
			return nil, fmt.Errorf("TLS client certificate (-client-cert, %s): %w", NomadEnvClientCert, err)
		}
	}
	if len(keyPEM) == 0 && t.ClientKey != "" {
		if keyPEM, err = os.ReadFile(t.ClientKey); err != nil {
			return nil, fmt.Errorf("TLS client key (-client-key, %s): %w", NomadEnvClientKey, err)
		}
	}
	switch {
	case len(certPEM) > 0 && len(keyPEM) > 0:
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %q and key %q: %w", t.ClientCert, t.ClientKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case len(certPEM) > 0:
		return nil, fmt.Errorf("TLS client certificate %q given without its key (-client-key, %s)", t.ClientCert, NomadEnvClientKey)
	case len(keyPEM) > 0:
		return nil, fmt.Errorf("TLS client key %q given without its certificate (-client-cert, %s)", t.ClientKey, NomadEnvClientCert)
	}
	return cfg, nil
}

func addPEMFile(pool *x509.CertPool, path string) error {
	buf, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for rest := buf; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		pool.AddCert(cert)
	}
	if pool.Equal(x509.NewCertPool()) {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	return nil
}

func loadCAPath(dir string) (*x509.CertPool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if err := addPEMFile(pool, filepath.Join(dir, e.Name())); err == nil {
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate file", dir)
	}
	return pool, nil
}

// explainTLS adds what to do to the errors a TLS handshake with an agent
// gives, which on their own name no setting. Typed errors are matched by
// type; the rest by the standard library's text, because that is all it
// gives: crypto/tls reports the peer's alert (certificate required, bad
// certificate) with an unexported type, net/http an HTTP answer to a TLS
// hello with a plain error, and platform verifiers an unknown authority
// without x509's type.
func explainTLS(err error) error {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown) || (errors.As(err, &verify) && strings.Contains(err.Error(), "unknown authority")):
		return fmt.Errorf("%w (the agent's certificate is signed by a CA this machine does not trust: "+
			"give that CA with -ca-cert or %s, e.g. nomad-agent-ca.pem)", err, NomadEnvCACert)
	case errors.As(err, &host):
		return fmt.Errorf("%w (the agent's certificate does not name the host in the address: "+
			"use an address its certificate names, such as https://localhost:4646, or set -tls-server-name or %s)", err, NomadEnvTLSServerName)
	case strings.Contains(err.Error(), "certificate required") || strings.Contains(err.Error(), "bad certificate"):
		return fmt.Errorf("%w (the agent requires a client certificate: give one with -client-cert and -client-key, "+
			"or %s and %s)", err, NomadEnvClientCert, NomadEnvClientKey)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%w (the agent's API is plain HTTP: use an http:// address)", err)
	}
	return err
}

package tlsutil

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
)

// Config is the agent's `tls {}` block: which listeners speak TLS, the
// files that hold the material, and how strictly peers are checked. The
// zero value is TLS off everywhere.
type Config struct {
	// EnableHTTP serves the HTTP API over HTTPS (tls.http).
	EnableHTTP bool
	// EnableRPC makes every connection on the RPC port, raft included,
	// TLS with a client certificate checked against the CA, and makes
	// this agent dial servers with TLS (tls.rpc).
	EnableRPC bool

	// CAFile holds the PEM certificates of the CA (or CAs) that sign
	// every agent's certificate (tls.ca_file).
	CAFile string
	// CertFile and KeyFile are this agent's PEM certificate (optionally
	// followed by intermediates) and its private key (tls.cert_file,
	// tls.key_file).
	CertFile string
	KeyFile  string

	// VerifyServerHostname requires servers to present a certificate for
	// server.<region>.nomad, and lets only such certificates speak raft
	// and server-to-server RPC (tls.verify_server_hostname).
	VerifyServerHostname bool
	// VerifyHTTPSClient requires HTTPS clients to present a certificate
	// signed by the CA (tls.verify_https_client).
	VerifyHTTPSClient bool

	// MinVersion is the oldest TLS version accepted: "tls12" (the
	// default when empty) or "tls13" (tls.tls_min_version).
	MinVersion string
}

// Enabled reports whether any listener speaks TLS.
func (c Config) Enabled() bool { return c.EnableHTTP || c.EnableRPC }

// minVersions are the versions tls_min_version may name. Older ones are
// refused: TLS 1.0 and 1.1 are deprecated (RFC 8996).
var minVersions = map[string]uint16{
	"":      tls.VersionTLS12,
	"tls12": tls.VersionTLS12,
	"tls13": tls.VersionTLS13,
}

// Validate checks the settings without reading any file. Each problem
// names the setting, what is wrong, and what would be right.
func (c Config) Validate() error {
	var errs []error
	if c.Enabled() {
		which := "tls.rpc"
		if !c.EnableRPC {
			which = "tls.http"
		}
		for _, f := range []struct{ name, v string }{
			{"tls.ca_file", c.CAFile}, {"tls.cert_file", c.CertFile}, {"tls.key_file", c.KeyFile},
		} {
			if strings.TrimSpace(f.v) == "" {
				errs = append(errs, fmt.Errorf("%s is required when %s is true: set it to the path of a PEM file (`drover tls ca create` and `drover tls cert create` make them)", f.name, which))
			}
		}
	}
	if c.VerifyServerHostname && !c.EnableRPC {
		errs = append(errs, errors.New("tls.verify_server_hostname needs tls.rpc = true: it checks the certificates of RPC peers"))
	}
	if c.VerifyHTTPSClient && !c.EnableHTTP {
		errs = append(errs, errors.New("tls.verify_https_client needs tls.http = true: it checks the certificates of HTTPS clients"))
	}
	if _, err := c.minVersion(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) minVersion() (uint16, error) {
	v, ok := minVersions[strings.ToLower(c.MinVersion)]
	if !ok {
		switch strings.ToLower(c.MinVersion) {
		case "tls10", "tls11":
			return 0, fmt.Errorf("tls.tls_min_version %q is refused: TLS versions older than 1.2 are insecure; use \"tls12\" (the default) or \"tls13\"", c.MinVersion)
		}
		return 0, fmt.Errorf("tls.tls_min_version %q is not a TLS version Drover knows: use \"tls12\" (the default) or \"tls13\"", c.MinVersion)
	}
	return v, nil
}

// Names a certificate carries for its role, as in Nomad. Servers and
// clients of a region are told apart by them.
const certDomain = "nomad"

// ServerName is the name a server certificate of region carries,
// server.<region>.nomad.
func ServerName(region string) string { return "server." + region + "." + certDomain }

// ClientName is the name a client agent certificate of region carries,
// client.<region>.nomad.
func ClientName(region string) string { return "client." + region + "." + certDomain }

// CLIName is the name a CLI (operator) certificate of region carries,
// cli.<region>.nomad.
func CLIName(region string) string { return "cli." + region + "." + certDomain }

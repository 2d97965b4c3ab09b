// Package tlstest makes throwaway certificate authorities and agent
// certificates for tests, so that no private key is ever committed. Every
// file lives in the test's temporary directory.
package tlstest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/drover-sched/drover/helper/tlsutil"
)

// CA is a certificate authority made for one test.
type CA struct {
	// Dir holds the CA's files and every certificate it signs.
	Dir string
	// CAFile is the CA certificate's path (tls.ca_file).
	CAFile string

	cert, key []byte
	n         atomic.Int64
}

// NewCA makes a CA whose files live in a temporary directory of t.
func NewCA(t testing.TB) *CA {
	t.Helper()
	cert, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatalf("tlstest: %v", err)
	}
	dir := t.TempDir()
	ca := &CA{Dir: dir, CAFile: filepath.Join(dir, "ca.pem"), cert: cert, key: key}
	writeFile(t, ca.CAFile, cert, 0o644)
	return ca
}

// PEM returns the CA's certificate and key.
func (c *CA) PEM() (cert, key []byte) { return c.cert, c.key }

// Cert signs a certificate for names (DNS names; "127.0.0.1" and other IPs
// become IP addresses) and returns the paths of its files.
func (c *CA) Cert(t testing.TB, names ...string) (certFile, keyFile string) {
	t.Helper()
	var dns []string
	var ips []net.IP
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, n)
		}
	}
	cn := "tlstest"
	if len(dns) > 0 {
		cn = dns[0]
	}
	cert, key, err := tlsutil.GenerateCert(tlsutil.CertOptions{CACert: c.cert, CAKey: c.key, CommonName: cn, DNSNames: dns, IPAddresses: ips})
	if err != nil {
		t.Fatalf("tlstest: %v", err)
	}
	i := c.n.Add(1)
	certFile = filepath.Join(c.Dir, fmt.Sprintf("cert-%d.pem", i))
	keyFile = filepath.Join(c.Dir, fmt.Sprintf("cert-%d-key.pem", i))
	writeFile(t, certFile, cert, 0o644)
	writeFile(t, keyFile, key, 0o600)
	return certFile, keyFile
}

// Role is an agent role whose certificate names it carries, as
// `drover tls cert create` makes them.
type Role string

// The roles.
const (
	Server Role = "server"
	Client Role = "client"
	CLI    Role = "cli"
)

// RoleCert signs a certificate for role in region with the names
// `drover tls cert create` gives it.
func (c *CA) RoleCert(t testing.TB, role Role, region string) (certFile, keyFile string) {
	t.Helper()
	switch role {
	case Server:
		return c.Cert(t, tlsutil.ServerName(region), "localhost", "127.0.0.1")
	case Client:
		return c.Cert(t, tlsutil.ClientName(region), "localhost", "127.0.0.1")
	case CLI:
		return c.Cert(t, tlsutil.CLIName(region), "localhost")
	}
	t.Fatalf("tlstest: unknown role %q", role)
	return "", ""
}

// Config is a tls block for an agent of role in region: RPC TLS on with
// verify_server_hostname, HTTPS off.
func (c *CA) Config(t testing.TB, role Role, region string) tlsutil.Config {
	t.Helper()
	cert, key := c.RoleCert(t, role, region)
	return tlsutil.Config{EnableRPC: true, VerifyServerHostname: true, CAFile: c.CAFile, CertFile: cert, KeyFile: key}
}

// Manager is a Manager for Config(t, role, region), changed by edit first
// when given.
func (c *CA) Manager(t testing.TB, role Role, region string, edit func(*tlsutil.Config)) *tlsutil.Manager {
	t.Helper()
	cfg := c.Config(t, role, region)
	if edit != nil {
		edit(&cfg)
	}
	m, err := tlsutil.New(cfg, region, nil)
	if err != nil {
		t.Fatalf("tlstest: %v", err)
	}
	return m
}

func writeFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatalf("tlstest: %v", err)
	}
}

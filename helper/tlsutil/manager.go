package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Manager holds the TLS material an agent uses and builds the configs of
// its listeners and dialers from it. See the package documentation.
//
// A nil *Manager is TLS off: its Enabled methods report false and its
// configs are nil, so callers can hold one unconditionally.
//
// Concurrency: the configs it returns may be used from any goroutine; they
// read the current material through an atomic pointer. Reload is
// serialised by a mutex.
type Manager struct {
	// flags are the settings that shape listeners and checks. They are
	// fixed at New: changing them needs a restart. The file paths in it
	// are those of the first load; a reload's are in its material.
	flags  Config
	region string
	logger hclog.Logger
	now    func() time.Time

	cur atomic.Pointer[material]

	mu sync.Mutex // serialises Reload
}

// New validates c, loads its files, and returns a Manager for an agent of
// region. With TLS off (c.Enabled() false) nothing is read. A nil logger
// discards logs.
func New(c Config, region string, logger hclog.Logger) (*Manager, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if region == "" {
		return nil, errors.New("tlsutil: the agent's region is needed to check certificate names")
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	m := &Manager{flags: c, region: region, logger: logger.Named("tls"), now: time.Now}
	if !c.Enabled() {
		return m, nil
	}
	mat, err := loadMaterial(c, m.now())
	if err != nil {
		return nil, err
	}
	m.cur.Store(mat)
	return m, nil
}

// RPCEnabled reports whether the RPC port speaks TLS (tls.rpc).
func (m *Manager) RPCEnabled() bool { return m != nil && m.flags.EnableRPC }

// HTTPEnabled reports whether the HTTP API speaks TLS (tls.http).
func (m *Manager) HTTPEnabled() bool { return m != nil && m.flags.EnableHTTP }

// VerifyServerHostname reports whether RPC peers' roles are checked
// (tls.verify_server_hostname).
func (m *Manager) VerifyServerHostname() bool {
	return m != nil && m.flags.EnableRPC && m.flags.VerifyServerHostname
}

// Region is the region whose certificate names the Manager checks.
func (m *Manager) Region() string {
	if m == nil {
		return ""
	}
	return m.region
}

// Reload reads the files c names (their paths may have changed) and, if
// they load and check as at start, uses them for every connection from now
// on. On error nothing changes: the material in use stays, the error is
// logged and returned. Which listeners speak TLS, and how peers are
// checked, changes only on restart; a c that changes those is logged.
func (m *Manager) Reload(c Config) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.EnableHTTP != m.flags.EnableHTTP || c.EnableRPC != m.flags.EnableRPC ||
		c.VerifyServerHostname != m.flags.VerifyServerHostname || c.VerifyHTTPSClient != m.flags.VerifyHTTPSClient {
		m.logger.Warn("tls.http, tls.rpc, tls.verify_server_hostname and tls.verify_https_client change only on restart; keeping the running settings")
	}
	if !m.flags.Enabled() || !c.Enabled() {
		// Nothing loaded to replace, or files for a TLS that is on
		// only until the restart.
		return nil
	}
	next := m.flags
	next.CAFile, next.CertFile, next.KeyFile, next.MinVersion = c.CAFile, c.CertFile, c.KeyFile, c.MinVersion
	mat, err := loadMaterial(next, m.now())
	if err != nil {
		m.logger.Error("TLS reload failed; new connections keep using the certificates loaded before", "error", err)
		return fmt.Errorf("tls reload: %w", err)
	}
	m.cur.Store(mat)
	m.logger.Info("TLS certificates reloaded", "cert_file", mat.certFile, "ca_file", mat.caFile,
		"not_after", mat.cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// Certificate returns the leaf certificate in use, nil with TLS off.
func (m *Manager) Certificate() *x509.Certificate {
	if m == nil {
		return nil
	}
	if mat := m.cur.Load(); mat != nil {
		return mat.cert.Leaf
	}
	return nil
}

// IncomingRPC is the config of the server's RPC port (nil unless
// tls.rpc): a client certificate signed by the CA is required. Each
// connection gets the material current when it starts.
func (m *Manager) IncomingRPC() *tls.Config {
	if !m.RPCEnabled() {
		return nil
	}
	return &tls.Config{
		MinVersion: m.cur.Load().minVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return m.cur.Load().rpcServer, nil
		},
	}
}

// OutgoingRPC is the config for dialing a server's RPC port (nil unless
// tls.rpc). It presents this agent's certificate and checks the server's
// against the CA; with verify_server_hostname the server's certificate
// must be valid for server.<region>.nomad.
func (m *Manager) OutgoingRPC() *tls.Config {
	if !m.RPCEnabled() {
		return nil
	}
	name := ""
	if m.flags.VerifyServerHostname {
		name = ServerName(m.region)
	}
	return m.clientConfig(func(leaf *x509.Certificate) error {
		if name == "" {
			return nil
		}
		if err := leaf.VerifyHostname(name); err != nil {
			return fmt.Errorf("the server's certificate is not a server certificate of region %q (tls.verify_server_hostname): %w", m.region, err)
		}
		return nil
	})
}

// IncomingHTTPS is the config of the HTTP API (nil unless tls.http).
// Client certificates are required only with verify_https_client.
func (m *Manager) IncomingHTTPS() *tls.Config {
	if !m.HTTPEnabled() {
		return nil
	}
	return &tls.Config{
		MinVersion: m.cur.Load().minVersion,
		NextProtos: []string{"h2", "http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return m.cur.Load().httpsServer, nil
		},
	}
}

// OutgoingHTTPS is the config for an agent calling another agent's HTTPS
// API (nil unless tls.http): it presents this agent's certificate and
// checks the other's against the CA. With verify_server_hostname the other
// must hold an agent certificate of this region (server.<region>.nomad or
// client.<region>.nomad): agents are dialled by address, which their
// certificates need not name, so the role is what is checked.
func (m *Manager) OutgoingHTTPS() *tls.Config {
	if !m.HTTPEnabled() {
		return nil
	}
	verifyRole := m.flags.VerifyServerHostname
	return m.clientConfig(func(leaf *x509.Certificate) error {
		if !verifyRole || hasName(leaf, ServerName(m.region)) || hasName(leaf, ClientName(m.region)) {
			return nil
		}
		return fmt.Errorf("the agent's certificate (names %v) is not an agent certificate of region %q (tls.verify_server_hostname)", leaf.DNSNames, m.region)
	})
}

// clientConfig is a dialer's config: the current certificate is presented
// and the peer's chain is checked against the current CA in
// VerifyConnection (Go's own check would pin the CA of the moment the
// config was made, and always checks a host name), then by check.
func (m *Manager) clientConfig(check func(leaf *x509.Certificate) error) *tls.Config {
	return &tls.Config{
		MinVersion: m.cur.Load().minVersion,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &m.cur.Load().cert, nil
		},
		// Verification happens in VerifyConnection, against the CA in
		// use at the time of the handshake.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			mat := m.cur.Load()
			leaf, err := verifyChain(cs.PeerCertificates, mat.pool, m.now(), x509.ExtKeyUsageServerAuth)
			if err != nil {
				return err
			}
			return check(leaf)
		},
	}
}

// verifyChain checks that certs (leaf first, then intermediates) chain to
// a root of pool for usage, and returns the leaf.
func verifyChain(certs []*x509.Certificate, pool *x509.CertPool, now time.Time, usage x509.ExtKeyUsage) (*x509.Certificate, error) {
	if len(certs) == 0 {
		return nil, errors.New("the peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{
		Roots: pool, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage},
	})
	if err != nil {
		return nil, fmt.Errorf("the peer's certificate is not signed by tls.ca_file: %w", err)
	}
	return certs[0], nil
}

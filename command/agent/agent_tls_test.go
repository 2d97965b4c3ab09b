package agent

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
)

// tlsAgentConfig turns on TLS for RPC and HTTP with a certificate of role.
func tlsAgentConfig(t *testing.T, ca *tlstest.CA, role tlstest.Role, verifyHTTPSClient bool) tlsutil.Config {
	t.Helper()
	cfg := ca.Config(t, role, "global")
	cfg.EnableHTTP = true
	cfg.VerifyHTTPSClient = verifyHTTPSClient
	return cfg
}

// nomadTLSClient is Nomad's Go client talking to a over HTTPS, presenting
// a CLI certificate of ca.
func nomadTLSClient(t *testing.T, ca *tlstest.CA, a *TestAgent) *nomadapi.Client {
	t.Helper()
	cert, key := ca.RoleCert(t, tlstest.CLI, "global")
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL, TLSConfig: &nomadapi.TLSConfig{
		CACert: ca.CAFile, ClientCert: cert, ClientKey: key,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHTTPSAPIWorksWithNomadsClient(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t)
	a := NewTestAgent(t, func(c *config.Config) { c.TLS = tlsAgentConfig(t, ca, tlstest.Server, true) })
	if !strings.HasPrefix(a.URL, "https://") {
		t.Fatalf("the agent should advertise an https URL, got %s", a.URL)
	}
	c := nomadTLSClient(t, ca, a)
	self, err := c.Agent().Self()
	if err != nil {
		t.Fatalf("agent self over HTTPS: %v", err)
	}
	if self.Member.Name == "" {
		t.Fatalf("agent self: %+v", self)
	}
	// The whole path: the job goes in over HTTPS, the agent's client
	// registers and runs it over mutual TLS RPC.
	if _, _, err := c.Jobs().Register(mockServiceJob("tls-job", "hi\n"), nil); err != nil {
		t.Fatalf("register over HTTPS: %v", err)
	}
	nomadJobAllocs(t, c, "tls-job", 1, "tls-job to run", clientStatus("running"))

	// verify_https_client: no certificate, no answer.
	caOnly, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL, TLSConfig: &nomadapi.TLSConfig{CACert: ca.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := caOnly.Agent().Self(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client without a certificate must be refused, got %v", err)
	}
	// A client that does not trust the agent's CA refuses it.
	stranger, _ := nomadapi.NewClient(&nomadapi.Config{Address: a.URL})
	if _, err := stranger.Agent().Self(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("want an unknown-authority error, got %v", err)
	}
	// Plain HTTP to the HTTPS port gets nothing useful.
	resp, err := http.Get("http://" + a.Addr + "/v1/agent/self")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP must not reach the API on an HTTPS port")
		}
	}
}

func TestHTTPSWithoutVerifyHTTPSClientNeedsOnlyTheCA(t *testing.T) {
	ca := tlstest.NewCA(t)
	a := NewTestAgent(t, func(c *config.Config) { c.TLS = tlsAgentConfig(t, ca, tlstest.Server, false) })
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL, TLSConfig: &nomadapi.TLSConfig{CACert: ca.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Agent().Self(); err != nil {
		t.Fatalf("HTTPS without client certificates: %v", err)
	}
}

func TestClientAgentJoinsAndIsReachedOverTLS(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t)
	srv := NewTestAgent(t, func(c *config.Config) { c.TLS = tlsAgentConfig(t, ca, tlstest.Server, true) })
	cli := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Meta = map[string]string{"role": "worker"}
		c.TLS = tlsAgentConfig(t, ca, tlstest.Client, true)
	})
	nc := nomadTLSClient(t, ca, srv)
	job := mockServiceJob("remote", "from the worker\n")
	job.Constrain(nomadapi.NewConstraint("${meta.role}", "=", "worker"))
	if _, _, err := nc.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	alloc := nomadJobAllocs(t, nc, "remote", 1, "remote to run", clientStatus("running"))[0]
	if alloc.NodeID != cli.NodeID() {
		t.Fatalf("alloc on %s, want the worker %s", alloc.NodeID, cli.NodeID())
	}
	// Asked of the server's agent, answered by the worker's: the request
	// is forwarded over HTTPS with the server agent's certificate.
	files, _, err := nc.AllocFS().List(alloc, "app", nil)
	if err != nil || len(files) == 0 {
		t.Fatalf("ls on the worker through the server agent: %v %+v", err, files)
	}
	// The client-only agent's own API reaches the servers over TLS RPC.
	if _, _, err := nomadTLSClient(t, ca, cli).Jobs().List(nil); err != nil {
		t.Fatalf("jobs through the client agent: %v", err)
	}
}

// servedCert returns the certificate the agent's HTTPS API presents to a
// new connection.
func servedCert(t *testing.T, ca *tlstest.CA, a *TestAgent) *x509.Certificate {
	t.Helper()
	caPEM, _ := ca.PEM()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	conn, err := tls.Dial("tcp", a.Addr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func TestReloadServesNewCertificatesAndKeepsTheOldOnBadFiles(t *testing.T) {
	ca := tlstest.NewCA(t)
	var cfg *config.Config
	a := NewTestAgent(t, func(c *config.Config) {
		c.TLS = tlsAgentConfig(t, ca, tlstest.Server, false)
		cfg = c.Copy()
	})
	first := servedCert(t, ca, a)

	next := cfg.Copy()
	next.TLS.CertFile, next.TLS.KeyFile = ca.RoleCert(t, tlstest.Server, "global")
	if err := a.Reload(next); err != nil {
		t.Fatalf("reload: %v", err)
	}
	second := servedCert(t, ca, a)
	if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatal("after the reload new connections must get the new certificate")
	}

	// The same paths with new contents are picked up too (a renewal
	// that rewrites the files in place).
	fresh, freshKey := ca.RoleCert(t, tlstest.Server, "global")
	copyFile(t, fresh, next.TLS.CertFile)
	copyFile(t, freshKey, next.TLS.KeyFile)
	if err := a.Reload(next); err != nil {
		t.Fatalf("reload of rewritten files: %v", err)
	}
	third := servedCert(t, ca, a)
	if third.SerialNumber.Cmp(second.SerialNumber) == 0 {
		t.Fatal("a reload must read files rewritten in place")
	}

	broken := next.Copy()
	broken.TLS.KeyFile = first.Subject.CommonName + "-missing.pem"
	if err := a.Reload(broken); err == nil || !strings.Contains(err.Error(), "tls.key_file") {
		t.Fatalf("want the reload refused naming tls.key_file, got %v", err)
	}
	if servedCert(t, ca, a).SerialNumber.Cmp(third.SerialNumber) != 0 {
		t.Fatal("a failed reload must keep the certificate in use")
	}
	// And the API still answers.
	caPEM, _ := ca.PEM()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get(a.URL + "/v1/agent/self")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the API after a failed reload: %v", err)
	}
	resp.Body.Close()
}

func TestAgentStartRefusesBadTLSFiles(t *testing.T) {
	ca := tlstest.NewCA(t)
	cfg := config.Dev()
	cfg.BindAddr, cfg.Ports, cfg.DataDir = "127.0.0.1", config.Ports{}, t.TempDir()
	cfg.TLS = ca.Config(t, tlstest.Server, "global")
	cfg.TLS.CAFile = cfg.TLS.CertFile + ".missing"
	_, err := NewAgent(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "tls.ca_file") || !strings.Contains(err.Error(), ".missing") {
		t.Fatalf("want the missing CA file named, got %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPSHandshakeIsBoundedByTheLimit(t *testing.T) {
	ca := tlstest.NewCA(t)
	a := NewTestAgent(t, func(c *config.Config) {
		c.TLS = tlsAgentConfig(t, ca, tlstest.Server, false)
		c.Limits.HTTPSHandshakeTimeout = 200 * time.Millisecond
	})
	// Opens a connection and never starts the handshake.
	conn, err := net.Dial("tcp", a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(4 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the agent sent something to a client that never said hello")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the agent held a silent HTTPS connection for 4s (the header timeout is 10s)")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("closed after %s, want about limits.https_handshake_timeout (200ms)", d)
	}
}

// Found from outside: with ACLs on and no TLS, one raft AppendEntries to
// the RPC port minted a management token (raft trusts whoever speaks
// it). Nothing prevents that without certificate roles, so a server with
// ACLs on says so when it starts without them, and not with them.
func TestAServerWithACLsWarnsWithoutTLSRoles(t *testing.T) {
	ca := tlstest.NewCA(t)
	for _, c := range []struct {
		name string
		tls  func() tlsutil.Config
		warn bool
	}{
		{"without TLS", func() tlsutil.Config { return tlsutil.Config{} }, true},
		{"with TLS but no certificate roles", func() tlsutil.Config {
			cfg := ca.Config(t, tlstest.Server, "global")
			cfg.VerifyServerHostname = false
			return cfg
		}, true},
		{"with TLS and certificate roles", func() tlsutil.Config { return ca.Config(t, tlstest.Server, "global") }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Dev()
			cfg.BindAddr, cfg.Ports, cfg.DataDir = "127.0.0.1", config.Ports{}, t.TempDir()
			cfg.Client.Enabled = false
			cfg.ACL.Enabled = true
			cfg.TLS = c.tls()
			var mu sync.Mutex
			var lines []string
			logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: writerFunc(func(p []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				lines = append(lines, string(p))
				return len(p), nil
			})})
			a, err := NewAgent(cfg, logger)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Shutdown()
			mu.Lock()
			warned := strings.Contains(strings.Join(lines, ""), "can speak raft and rewrite the cluster's state")
			mu.Unlock()
			if warned != c.warn {
				t.Fatalf("warned = %v, want %v; log:\n%s", warned, c.warn, strings.Join(lines, ""))
			}
		})
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

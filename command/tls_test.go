package command

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/tlsutil"
)

// runCLIEnv runs the CLI with the given environment and no fake agent.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := newMeta(&stdout, &stderr)
	m.getenv = func(k string) string { return env[k] }
	m.environ = func() []string { return nil }
	m.now = time.Now
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.ctx = ctx
	code, ok := runVerbMeta(m, args)
	if !ok {
		t.Fatalf("%v is not a verb", args)
	}
	return result{code, stdout.String(), stderr.String()}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(buf)
	if block == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	res := runCLIEnv(t, nil, args...)
	if res.code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

func TestTLSCommandsMakeNomadsFilesWithNomadsNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	out := mustRun(t, "tls", "ca", "create")
	wantLines(t, out, "==> CA certificate saved to: nomad-agent-ca.pem", "==> CA certificate key saved to: nomad-agent-ca-key.pem")
	out = mustRun(t, "tls", "cert", "create", "-server", "-additional-dnsname=server1.example", "-additional-ipaddress=10.0.0.5")
	wantLines(t, out, "WARNING", "==> Using CA certificate nomad-agent-ca.pem and CA key nomad-agent-ca-key.pem",
		"==> Server certificate saved to: global-server-nomad.pem", "==> Server certificate key saved to: global-server-nomad-key.pem")
	mustRun(t, "tls", "cert", "create", "-client", "-region=europe", "-days=30")
	mustRun(t, "tls", "cert", "create", "-cli")

	ca := readCert(t, "nomad-agent-ca.pem")
	if !ca.IsCA {
		t.Fatal("the CA certificate is not a CA")
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, tc := range []struct {
		file  string
		names []string
		ips   []string
		usage []x509.ExtKeyUsage
	}{
		{"global-server-nomad.pem", []string{"server.global.nomad", "localhost", "server1.example"}, []string{"127.0.0.1", "10.0.0.5"},
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{"europe-client-nomad.pem", []string{"client.europe.nomad", "localhost"}, []string{"127.0.0.1"},
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{"global-cli-nomad.pem", []string{"cli.global.nomad", "localhost"}, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	} {
		c := readCert(t, tc.file)
		if strings.Join(c.DNSNames, ",") != strings.Join(tc.names, ",") {
			t.Errorf("%s: names %v, want %v", tc.file, c.DNSNames, tc.names)
		}
		var ips []string
		for _, ip := range c.IPAddresses {
			ips = append(ips, ip.String())
		}
		if strings.Join(ips, ",") != strings.Join(tc.ips, ",") {
			t.Errorf("%s: IPs %v, want %v", tc.file, ips, tc.ips)
		}
		for _, u := range tc.usage {
			if _, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
				t.Errorf("%s: usage %v: %v", tc.file, u, err)
			}
		}
		if k, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
			t.Errorf("%s: want an ECDSA P-256 key, got %T", tc.file, c.PublicKey)
		}
		key := strings.TrimSuffix(tc.file, ".pem") + "-key.pem"
		if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: want mode 0600, got %v %v", key, st.Mode(), err)
		}
	}
	if d := readCert(t, "europe-client-nomad.pem"); d.NotAfter.Sub(d.NotBefore) > 31*24*time.Hour {
		t.Errorf("-days=30 made a certificate valid for %s", d.NotAfter.Sub(d.NotBefore))
	}
	if st, _ := os.Stat("nomad-agent-ca-key.pem"); st.Mode().Perm() != 0o600 {
		t.Errorf("CA key mode %v", st.Mode())
	}
}

func TestTLSCommandsNeverOverwriteAndExplainMistakes(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "tls", "ca", "create")
	before, _ := os.ReadFile("nomad-agent-ca-key.pem")
	res := runCLIEnv(t, nil, "tls", "ca", "create")
	if res.code != 1 || !strings.Contains(res.stderr, "nomad-agent-ca.pem already exists") {
		t.Fatalf("a second CA over the first: exit %d %s", res.code, res.stderr)
	}
	if after, _ := os.ReadFile("nomad-agent-ca-key.pem"); !bytes.Equal(before, after) {
		t.Fatal("the CA key was overwritten")
	}
	mustRun(t, "tls", "cert", "create", "-client")
	if res := runCLIEnv(t, nil, "tls", "cert", "create", "-client"); res.code != 1 || !strings.Contains(res.stderr, "global-client-nomad.pem already exists") {
		t.Fatalf("a second client certificate: exit %d %s", res.code, res.stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-server", "-client"}, "Give exactly one of -server, -client or -cli"},
		{[]string{}, "Give exactly one of -server, -client or -cli"},
		{[]string{"-cli", "-additional-ipaddress=not-an-ip"}, `-additional-ipaddress "not-an-ip" is not an IP address`},
		{[]string{"-cli", "-days=0"}, "-days must be a positive number of days"},
		{[]string{"-server", "-ca=missing.pem"}, "Error reading the CA certificate (-ca)"},
	} {
		res := runCLIEnv(t, nil, append([]string{"tls", "cert", "create"}, tc.args...)...)
		if res.code != 1 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %q in:\n%s", tc.args, res.code, tc.want, res.stderr)
		}
	}
	if _, err := os.Stat("global-server-nomad.pem"); err == nil {
		t.Error("a failed run left a certificate behind")
	}
}

func TestAgentStartsWithTheTLSCommandsFilesAndTheCLIReachesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	mustRun(t, "tls", "ca", "create")
	mustRun(t, "tls", "cert", "create", "-server")
	mustRun(t, "tls", "cert", "create", "-cli")
	abs := func(f string) string { return filepath.Join(dir, f) }

	ta := agenttest.New(t, func(c *config.Config) {
		c.TLS = tlsutil.Config{
			EnableHTTP: true, EnableRPC: true,
			CAFile: abs("nomad-agent-ca.pem"), CertFile: abs("global-server-nomad.pem"), KeyFile: abs("global-server-nomad-key.pem"),
			VerifyServerHostname: true, VerifyHTTPSClient: true,
		}
	})
	_, port, _ := net.SplitHostPort(ta.Addr)
	// The server certificate names localhost and 127.0.0.1.
	addr := "https://localhost:" + port
	flags := []string{"-address=" + addr, "-ca-cert=" + abs("nomad-agent-ca.pem"),
		"-client-cert=" + abs("global-cli-nomad.pem"), "-client-key=" + abs("global-cli-nomad-key.pem")}

	res := runCLIEnv(t, nil, append([]string{"node", "status"}, flags...)...)
	if res.code != 0 || !strings.Contains(res.stdout, "ready") {
		t.Fatalf("node status with TLS flags: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// The same from Nomad's environment variables.
	env := map[string]string{
		"NOMAD_ADDR": "https://127.0.0.1:" + port, "NOMAD_CACERT": abs("nomad-agent-ca.pem"),
		"NOMAD_CLIENT_CERT": abs("global-cli-nomad.pem"), "NOMAD_CLIENT_KEY": abs("global-cli-nomad-key.pem"),
	}
	if res := runCLIEnv(t, env, "server", "members"); res.code != 0 || !strings.Contains(res.stdout, "alive") {
		t.Fatalf("server members from the environment: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// Without the CA, and without a client certificate: the error says
	// which flag is missing.
	res = runCLIEnv(t, nil, "node", "status", "-address="+addr)
	if res.code != 1 || !strings.Contains(res.stderr, "-ca-cert") {
		t.Fatalf("without -ca-cert: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLIEnv(t, nil, "node", "status", "-address="+addr, "-ca-cert="+abs("nomad-agent-ca.pem"))
	if res.code != 1 || !strings.Contains(res.stderr, "-client-cert") {
		t.Fatalf("without -client-cert: exit %d\n%s", res.code, res.stderr)
	}
	// -tls-skip-verify skips the CA check, not the client certificate.
	res = runCLIEnv(t, nil, "node", "status", "-address="+addr, "-tls-skip-verify",
		"-client-cert="+abs("global-cli-nomad.pem"), "-client-key="+abs("global-cli-nomad-key.pem"))
	if res.code != 0 {
		t.Fatalf("-tls-skip-verify: exit %d\n%s", res.code, res.stderr)
	}
}

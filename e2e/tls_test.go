//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// tlsFiles makes a CA and server, client and CLI certificates with the
// binary's own `drover tls` commands, in a directory of the test.
func tlsFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"tls", "ca", "create"},
		{"tls", "cert", "create", "-server"},
		{"tls", "cert", "create", "-client"},
		{"tls", "cert", "create", "-cli"},
	} {
		cmd := exec.Command(binary(t), args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("drover %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// tlsBlock is an agent's tls block with the role's certificate.
func tlsBlock(dir, role string) string {
	return fmt.Sprintf(`
tls {
  http = true
  rpc  = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  verify_server_hostname = true
  verify_https_client    = true
}`, filepath.Join(dir, "nomad-agent-ca.pem"), filepath.Join(dir, "global-"+role+"-nomad.pem"), filepath.Join(dir, "global-"+role+"-nomad-key.pem"))
}

func cliTLS(dir string) *api.TLSConfig {
	return &api.TLSConfig{
		CACert:     filepath.Join(dir, "nomad-agent-ca.pem"),
		ClientCert: filepath.Join(dir, "global-cli-nomad.pem"),
		ClientKey:  filepath.Join(dir, "global-cli-nomad-key.pem"),
	}
}

// aclBlock turns ACLs on.
const aclBlock = `
acl {
  enabled = true
}`

// Three server processes with mutual TLS and ACLs form a cluster, a client
// agent joins with its certificate and runs a job submitted with a token
// that may submit it (a token that may only read gets a 403, and so does
// no token), and the ports refuse a caller without a certificate,
// plaintext raft, and raft from a client certificate.
func TestTLSClusterOfProcesses(t *testing.T) {
	dir := tlsFiles(t)
	rpcPorts := []int{freePort(t), freePort(t), freePort(t)}
	var servers []*agent
	for i := range rpcPorts {
		var join []string
		for j, p := range rpcPorts {
			if j != i {
				join = append(join, fmt.Sprintf(`"127.0.0.1:%d"`, p))
			}
		}
		s := newAgentWithRPCPort(t, agentSpec{name: fmt.Sprintf("tls-s%d", i+1), extra: fmt.Sprintf(`
server {
  enabled          = true
  bootstrap_expect = 3
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }
}`, strings.Join(join, ", ")) + tlsBlock(dir, "server") + aclBlock}, rpcPorts[i])
		s.tls = cliTLS(dir)
		servers = append(servers, s)
	}
	waitForAgreedLeader(t, servers, 60*time.Second, "")
	mgmt, submit, read := aclTokens(t, servers[0])
	for _, s := range servers {
		s.token = mgmt
	}

	c := newAgent(t, agentSpec{name: "tls-c1", extra: fmt.Sprintf(`
client {
  enabled = true
  servers = [%q, %q, %q]
}
plugin "mock_driver" {
  config {}
}`, servers[0].rpcAddr(), servers[1].rpcAddr(), servers[2].rpcAddr()) + tlsBlock(dir, "client") + aclBlock})
	c.tls = cliTLS(dir)
	c.token = mgmt
	waitForReadyNodes(t, servers[0], "tls-c1")

	// Only a token that may submit jobs submits one.
	jobFile := filepath.Join(t.TempDir(), "tls-web.hcl")
	if err := os.WriteFile(jobFile, []byte(mockJob("tls-web", 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, token := range map[string]string{"a read-only token": read, "no token": ""} {
		servers[1].token = token
		if out, code := servers[1].cli("job", "run", "-detach", jobFile); code == 0 || !strings.Contains(out, "403") || !strings.Contains(out, "Permission denied") {
			t.Fatalf("job run with %s: exit %d, want a 403\n%s", name, code, out)
		}
	}
	servers[1].token = submit
	if out, code := servers[1].cli("job", "run", "-detach", jobFile); code != 0 {
		t.Fatalf("job run with a token that may submit: exit %d\n%s", code, out)
	}
	servers[1].token = mgmt
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(servers[2], "tls-web")
		if err != nil {
			return false, err.Error()
		}
		return len(runningAllocs(allocs)) == 2, describeAllocs(allocs)
	})
	// The CLI, given the files through Nomad's variables, reaches the
	// client agent's HTTPS API too.
	if out, code := c.cli("node", "status"); code != 0 || !strings.Contains(out, "tls-c1") {
		t.Fatalf("node status through the client agent: exit %d\n%s", code, out)
	}

	// No client certificate: the HTTPS API refuses.
	noCert, err := api.NewClient(&api.Config{Address: servers[0].httpAddr(), TLSConfig: &api.TLSConfig{CACert: cliTLS(dir).CACert}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noCert.Status().Leader(); err == nil || !strings.Contains(err.Error(), "client certificate") {
		t.Fatalf("an HTTPS client without a certificate: want refused, got %v", err)
	}

	caPEM, err := os.ReadFile(cliTLS(dir).CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	for _, tc := range []struct {
		name string
		dial func(addr string) (net.Conn, error)
	}{
		{"plaintext raft", func(addr string) (net.Conn, error) {
			conn, err := net.Dial("tcp", addr)
			if err == nil {
				_, err = conn.Write([]byte{0x02, 0x00, 0x01})
			}
			return conn, err
		}},
		{"TLS without a certificate", func(addr string) (net.Conn, error) {
			return tlsRPC(addr, &tls.Config{RootCAs: pool, ServerName: "server.global.nomad"}, 0x01)
		}},
		{"raft from a client certificate", func(addr string) (net.Conn, error) {
			cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "global-client-nomad.pem"), filepath.Join(dir, "global-client-nomad-key.pem"))
			if err != nil {
				return nil, err
			}
			return tlsRPC(addr, &tls.Config{RootCAs: pool, ServerName: "server.global.nomad", Certificates: []tls.Certificate{cert}}, 0x02)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := tc.dial(servers[0].rpcAddr())
			if err != nil {
				// Refused during the handshake is a refusal too; any
				// other failure means the test did not reach the check.
				if !strings.Contains(err.Error(), "certificate required") && !strings.Contains(err.Error(), "bad certificate") {
					t.Fatalf("dial: %v", err)
				}
				return
			}
			defer conn.Close()
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.Read(make([]byte, 1))
			var ne net.Error
			if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("the server kept the connection open (%v)", err)
			}
		})
	}
	// The cluster is unharmed.
	waitForAgreedLeader(t, servers, 30*time.Second, "")
}

// aclTokens bootstraps the cluster's ACLs through s with the CLI, and
// returns the management token's secret and the secrets of a token that
// may submit jobs in the default namespace and one that may only read
// them.
func aclTokens(t *testing.T, s *agent) (mgmt, submit, read string) {
	t.Helper()
	secret := regexp.MustCompile(`(?m)^Secret ID\s+= (\S+)$`)
	var out string
	waitFor(t, 30*time.Second, func() (bool, string) {
		var code int
		out, code = s.cli("acl", "bootstrap")
		return code == 0, out
	})
	m := secret.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Secret ID in the bootstrap's answer:\n%s", out)
	}
	s.token = m[1]
	defer func() { s.token = "" }()
	dir := t.TempDir()
	for name, rules := range map[string]string{
		"submit": "namespace \"default\" {\n  policy = \"write\"\n}\n",
		"read":   "namespace \"default\" {\n  policy = \"read\"\n}\n",
	} {
		path := filepath.Join(dir, name+".hcl")
		if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, code := s.cli("acl", "policy", "apply", name, path); code != 0 {
			t.Fatalf("policy %s: exit %d\n%s", name, code, out)
		}
		out, code := s.cli("acl", "token", "create", "-name="+name, "-policy="+name)
		tok := secret.FindStringSubmatch(out)
		if code != 0 || tok == nil {
			t.Fatalf("token %s: exit %d\n%s", name, code, out)
		}
		if name == "submit" {
			submit = tok[1]
		} else {
			read = tok[1]
		}
	}
	return m[1], submit, read
}

// tlsRPC opens a TLS connection to an RPC port and announces typ inside it.
func tlsRPC(addr string, cfg *tls.Config, typ byte) (net.Conn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte{0x04}); err != nil {
		conn.Close()
		return nil, err
	}
	tc := tls.Client(conn, cfg)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	if _, err := tc.Write([]byte{typ}); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

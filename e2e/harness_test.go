//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/helper/testutil/wait"
)

// binary returns the drover binary under test.
func binary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("DROVER_BINARY"); b != "" {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	b := filepath.Join(filepath.Dir(file), "..", "bin", "drover")
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("no drover binary at %s: run `make e2e` (or set DROVER_BINARY)", b)
	}
	return b
}

// Ports handed out by freePort in this process, so none is given twice.
// dynamicPortsFrom is where the clients' dynamic ports start (the default
// min_dynamic_port, which the tests' agents keep).
const dynamicPortsFrom = 20000

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// freePort returns a port that was free a moment ago, chosen below the
// kernel's ephemeral range: a port from that range (what listening on :0
// gives) may be taken by any outgoing connection or other test process
// before the agent binds it, and an agent whose peers were told its port
// cannot move. It is chosen below the clients' dynamic port range too
// (dynamicPortsFrom): the scheduler gives allocs ports from
// that range without knowing what else listens on the machine, and a task
// handed an agent's port could not bind it, while its HTTP check, probing
// the agent, passed.
func freePort(t *testing.T) int {
	t.Helper()
	// [from, to): from 10000 up to the dynamic range, or to where the
	// ephemeral range starts if that is lower.
	from, to := 10000, dynamicPortsFrom
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > from+1000 && n < to {
				to = n
			}
		}
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := from + rand.IntN(to-from)
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[p] = true
		return p
	}
	t.Fatal("no free port below the ephemeral range after 1000 tries")
	return 0
}

// agent is one running `drover agent` process.
type agent struct {
	t        *testing.T
	name     string
	dir      string
	config   string
	httpPort int
	rpcPort  int
	cmd      *exec.Cmd
	log      *bytes.Buffer
	done     chan error
	// tls, when set, is how the test reaches an agent whose API speaks
	// HTTPS (tls.http): its CA and a CLI certificate.
	tls *api.TLSConfig
	// token, when set, is the ACL token api() and cli() send.
	token string
	// host, when set, is the address the agent binds and is reached at
	// (an agent in its own network namespace); empty means 127.0.0.1.
	host string
}

// agentSpec describes an agent's configuration file body (without ports
// and data_dir, which the harness fills).
type agentSpec struct {
	name  string
	extra string
}

func newAgent(t *testing.T, spec agentSpec) *agent {
	t.Helper()
	a := &agent{t: t, name: spec.name, dir: t.TempDir(), httpPort: freePort(t), rpcPort: freePort(t)}
	writeConfig(t, a, spec.extra)
	a.start()
	t.Cleanup(a.stop)
	return a
}

// writeConfig writes the agent's HCL file: ports, data dir, and extra.
func writeConfig(t *testing.T, a *agent, extra string) {
	t.Helper()
	a.config = filepath.Join(a.dir, "agent.hcl")
	body := fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = %q
log_level = "DEBUG"
ports {
  http = %d
  rpc  = %d
}
%s
`, a.name, filepath.Join(a.dir, "data"), a.hostAddr(), a.httpPort, a.rpcPort, extra)
	if err := os.WriteFile(a.config, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (a *agent) start() {
	a.t.Helper()
	a.log = &bytes.Buffer{}
	a.cmd = exec.Command(binary(a.t), "agent", "-config", a.config)
	a.cmd.Stdout, a.cmd.Stderr = a.log, a.log
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		a.t.Fatalf("starting agent %s: %v", a.name, err)
	}
	a.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(a.cmd, a.done)
}

// kill stops the agent abruptly, like a crashed machine.
func (a *agent) kill() {
	if a.cmd == nil {
		return
	}
	syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
	<-a.done
	a.cmd = nil
}

// stop interrupts the agent and waits for it (a graceful shutdown).
func (a *agent) stop() {
	if a.cmd == nil {
		return
	}
	a.cmd.Process.Signal(os.Interrupt)
	select {
	case <-a.done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.done
	}
	a.cmd = nil
	if a.t.Failed() {
		a.t.Logf("agent %s log:\n%s", a.name, a.log.String())
	}
}

func (a *agent) httpAddr() string {
	if a.tls != nil {
		// The agents' certificates name localhost, not every address.
		return fmt.Sprintf("https://localhost:%d", a.httpPort)
	}
	return fmt.Sprintf("http://%s:%d", a.hostAddr(), a.httpPort)
}

func (a *agent) rpcAddr() string { return fmt.Sprintf("%s:%d", a.hostAddr(), a.rpcPort) }

// hostAddr is the address the agent binds: host, or the loopback.
func (a *agent) hostAddr() string {
	if a.host != "" {
		return a.host
	}
	return "127.0.0.1"
}

// waitOneReadyNode waits until a, a single-machine agent, lists one
// node and it is ready, and returns the node's ID.
func (a *agent) waitOneReadyNode(t *testing.T) string {
	t.Helper()
	var nodeID string
	waitFor(t, 60*time.Second, func() (bool, string) {
		nodes, _, err := a.api().Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return false, fmt.Sprintf("nodes %v (%v)", nodes, err)
		}
		nodeID = nodes[0].ID
		return true, ""
	})
	return nodeID
}

func (a *agent) api() *api.Client {
	a.t.Helper()
	c, err := api.NewClient(&api.Config{Address: a.httpAddr(), TLSConfig: a.tls, SecretID: a.token})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// cli runs a drover CLI command against the agent.
func (a *agent) cli(args ...string) (string, int) {
	a.t.Helper()
	cmd := exec.Command(binary(a.t), args...)
	cmd.Env = append(os.Environ(), "DROVER_ADDR="+a.httpAddr(), "NOMAD_ADDR="+a.httpAddr())
	if a.tls != nil {
		cmd.Env = append(cmd.Env, "NOMAD_CACERT="+a.tls.CACert, "NOMAD_CLIENT_CERT="+a.tls.ClientCert, "NOMAD_CLIENT_KEY="+a.tls.ClientKey)
	}
	if a.token != "" {
		cmd.Env = append(cmd.Env, "DROVER_TOKEN="+a.token)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			a.t.Fatalf("running drover %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	wait.For(t, timeout, cond, wait.Every(50*time.Millisecond))
}

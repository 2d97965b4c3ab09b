// Package testagent has what the agent's own tests (package agent) and the
// tests of other packages (through command/agent/agenttest) share of a
// test agent: its node name, its logger, where its docker driver looks for
// a daemon, and the waits that make it ready for work. It does not import
// the agent, so package agent's tests can import it; only tests do, and
// the drover binary carries none of it (binary_deps_test.go at the module
// root).
package testagent

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/structs"
)

// StartTimeout bounds how long Start waits for a leader and for the
// client's node to be ready.
const StartTimeout = 30 * time.Second

// NoDockerEndpoint is where test agents' docker driver looks for a daemon:
// nowhere.
const NoDockerEndpoint = "unix:///nonexistent/drover-test-docker.sock"

// Version is a test agent's version.
const Version = "0.0.0-test"

// Agent is what Start needs of an agent.
type Agent interface {
	RPC(method string, args, reply any) error
	NodeID() string
	Shutdown() error
}

// Roles says what an agent runs, so Start knows what to wait for.
type Roles struct {
	Region         string
	Server, Client bool
	ACL            bool
}

// Start starts an agent with start, given the test logger (discarded
// unless DROVER_TEST_LOG is set, to a level), and shuts it down when the
// test ends. It returns once the server has a leader and the client's node
// is registered and ready, so a test can submit work at once (a
// client-only agent with ACLs on returns once its client has registered:
// reading the node needs a token).
func Start[A Agent](t testing.TB, name string, roles Roles, start func(hclog.Logger) (A, error)) A {
	t.Helper()
	logger := hclog.NewNullLogger()
	if lvl := os.Getenv("DROVER_TEST_LOG"); lvl != "" {
		logger = hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.LevelFromString(lvl), Output: os.Stderr})
	}
	a, err := start(logger)
	if err != nil {
		t.Fatalf("starting test agent: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Shutdown(); err != nil {
			t.Errorf("test agent shutdown: %v", err)
		}
	})
	if roles.Server {
		WaitFor(t, "a cluster leader", func() bool {
			var leader string
			err := a.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{Region: roles.Region}}, &leader)
			return err == nil && leader != ""
		})
	}
	if roles.Client && roles.ACL && !roles.Server {
		// A client-only agent with ACLs on has no token to read its node
		// with: the test waits for the node itself, with a token of its
		// own, once the client has registered.
		WaitFor(t, "the client to register", func() bool { return a.NodeID() != "" })
	} else if roles.Client {
		WaitFor(t, "the client's node to be ready", func() bool {
			id := a.NodeID()
			if id == "" {
				return false
			}
			var out structs.SingleNodeResponse
			args := structs.NodeSpecificRequest{NodeID: id, QueryOptions: structs.QueryOptions{Region: roles.Region}}
			err := a.RPC("Node.GetNode", &args, &out)
			return err == nil && out.Node != nil && out.Node.Status == structs.NodeStatusReady
		})
	}
	return a
}

// WaitFor polls cond until it holds, failing the test after StartTimeout.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(StartTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("test agent: timed out after %s waiting for %s", StartTimeout, what)
		}
		<-tick.C
	}
}

// agents numbers test agents, so agents of one test have distinct node
// names.
var agents atomic.Int64

// NodeName returns a node name for a new test agent of t.
func NodeName(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("test-%s-%d", name, agents.Add(1))
}

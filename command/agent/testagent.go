package agent

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

// TestAgent is a real in-process agent for tests, in this package or any
// other: by default a dev agent (server and client, raw_exec and mock
// drivers) on 127.0.0.1 with free ports and short raft timings.
type TestAgent struct {
	*Agent
	// Addr is the HTTP API address, "127.0.0.1:port".
	Addr string
	// URL is the HTTP API base URL, "http://127.0.0.1:port" (https with
	// tls.http).
	URL string
}

// testStartTimeout bounds how long NewTestAgent waits for a leader and for
// the client's node to be ready.
const testStartTimeout = 30 * time.Second

// TestNoDockerEndpoint is where test agents' docker driver looks for a
// daemon: nowhere.
const TestNoDockerEndpoint = "unix:///nonexistent/drover-test-docker.sock"

// NewTestAgent starts an agent and shuts it down when the test ends. cb
// may change the configuration first (disable the client, add meta, set
// ServerHook or ClientHook). It returns once the server has a leader and
// the client's node is registered and ready, so a test can submit work at
// once (a client-only agent with ACLs on returns once its client has
// registered: reading the node needs a token). Logs are discarded unless
// DROVER_TEST_LOG is set (to a level).
func NewTestAgent(t testing.TB, cb func(*Config)) *TestAgent {
	t.Helper()
	cfg := DevConfig()
	cfg.Name = testNodeName(t)
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports = Ports{}
	cfg.DataDir = t.TempDir()
	cfg.Version = "0.0.0-test"
	// Test agents do not depend on the machine's Docker Engine: their
	// docker driver is loaded but unhealthy, unless cb configures one.
	cfg.Plugins["docker"] = &PluginConfig{Name: "docker", Config: map[string]any{"endpoint": TestNoDockerEndpoint}}
	if cb != nil {
		cb(cfg)
	}
	userHook := cfg.ServerHook
	cfg.ServerHook = func(sc *nomad.Config) {
		testServerDefaults(sc)
		if userHook != nil {
			userHook(sc)
		}
	}

	logger := hclog.NewNullLogger()
	if lvl := os.Getenv("DROVER_TEST_LOG"); lvl != "" {
		logger = hclog.New(&hclog.LoggerOptions{Name: cfg.Name, Level: hclog.LevelFromString(lvl), Output: os.Stderr})
	}
	a, err := NewAgent(cfg, logger)
	if err != nil {
		t.Fatalf("starting test agent: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Shutdown(); err != nil {
			t.Errorf("test agent shutdown: %v", err)
		}
	})
	ta := &TestAgent{Agent: a, Addr: a.HTTPAddr(), URL: a.HTTPURL()}
	if cfg.Server.Enabled {
		ta.waitFor(t, "a cluster leader", func() bool {
			var leader string
			err := a.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{Region: cfg.Region}}, &leader)
			return err == nil && leader != ""
		})
	}
	if cfg.Client.Enabled && cfg.ACL.Enabled && !cfg.Server.Enabled {
		// A client-only agent with ACLs on has no token to read its node
		// with: the test waits for the node itself, with a token of its
		// own, once the client has registered.
		ta.waitFor(t, "the client to register", func() bool { return a.NodeID() != "" })
	} else if cfg.Client.Enabled {
		ta.waitFor(t, "the client's node to be ready", func() bool {
			id := a.NodeID()
			if id == "" {
				return false
			}
			var out structs.SingleNodeResponse
			args := structs.NodeSpecificRequest{NodeID: id, QueryOptions: structs.QueryOptions{Region: cfg.Region}}
			err := a.RPC("Node.GetNode", &args, &out)
			return err == nil && out.Node != nil && out.Node.Status == structs.NodeStatusReady
		})
	}
	return ta
}

// waitFor polls cond until it holds, failing the test at the deadline.
func (ta *TestAgent) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testStartTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("test agent: timed out after %s waiting for %s", testStartTimeout, what)
		}
		<-tick.C
	}
}

// testServerDefaults makes elections and joins fast and the server small.
func testServerDefaults(sc *nomad.Config) {
	sc.NumSchedulers = 1
	sc.RetryJoinInterval = 100 * time.Millisecond
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout = 200 * time.Millisecond
	rc.ElectionTimeout = 200 * time.Millisecond
	rc.LeaderLeaseTimeout = 100 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	sc.RaftConfig = rc
}

// testAgents numbers test agents, so agents of one test have distinct
// node names.
var testAgents atomic.Int64

func testNodeName(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("test-%s-%d", name, testAgents.Add(1))
}

package client

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/clienttest"
	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// env is one test's fake server, fake clock and data dir; clients started
// from it share all three, as a restarted agent would.
type env struct {
	t   *testing.T
	fs  *clienttest.FakeServer
	clk *clock.Fake
	dir string
}

func newEnv(t *testing.T, ttl time.Duration) *env {
	return &env{t: t, fs: clienttest.NewFakeServer(ttl), clk: clock.NewFake(time.Time{}), dir: t.TempDir()}
}

// start starts a client on the env's data dir. Shut it down yourself to
// restart it; testClient's cleanup makes a second Shutdown harmless.
func (e *env) start(cb func(*config.Config)) *Client {
	e.t.Helper()
	c := testClient(e.t, func(cfg *config.Config) {
		cfg.DataDir, cfg.RPC, cfg.Clock = e.dir, e.fs, e.clk
		cfg.GCInterval = time.Hour
		if cb != nil {
			cb(cfg)
		}
	})
	e.waitFor("registration", func() bool { return e.fs.Node(c.NodeID()) != nil })
	return c
}

// waitFor waits for cond, moving the fake clock in small steps meanwhile so
// that batching, heartbeats and restart delays make progress.
func (e *env) waitFor(msg string, cond func() bool) {
	e.t.Helper()
	testutil.WaitForWhile(e.t, msg, cond, func() { e.clk.Advance(50 * time.Millisecond) })
}

func (e *env) serverStatus(id string) string {
	a := e.fs.Alloc(id)
	if a == nil {
		return ""
	}
	return a.ClientStatus
}

func (e *env) waitServerStatus(id, status string) {
	e.t.Helper()
	e.waitFor("server to see alloc "+structs.ShortID(id)+" "+status, func() bool { return e.serverStatus(id) == status })
}

func job(jobType string, tasks ...*structs.Task) *structs.Job {
	for _, t := range tasks {
		if t.RestartPolicy == nil {
			t.RestartPolicy = &structs.RestartPolicy{Attempts: 0, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}
		}
		if t.KillTimeout == 0 {
			t.KillTimeout = 5 * time.Second
		}
	}
	return &structs.Job{ID: "job-" + structs.GenerateUUID()[:6], Name: "job", Type: jobType, Namespace: "default",
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: tasks}}}
}

func allocFor(nodeID string, j *structs.Job) *structs.Allocation {
	return &structs.Allocation{ID: structs.GenerateUUID(), Name: j.ID + ".g[0]", NodeID: nodeID, Namespace: "default",
		JobID: j.ID, Job: j, TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun}
}

func mockTask(cfg map[string]any) *structs.Task {
	return &structs.Task{Name: "web", Driver: "mock", Config: cfg}
}

func shTask(script string) *structs.Task {
	return &structs.Task{Name: "web", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", script}}}
}

func countEvents(s *structs.TaskState, typ string) int {
	n := 0
	for _, e := range s.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func eventList(s *structs.TaskState) string {
	var out []string
	for _, e := range s.Events {
		out = append(out, e.Type)
	}
	return strings.Join(out, ", ")
}

package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/hoststats"
	"github.com/drover-sched/drover/client/taskrunner"
)

// actionsClient is a fake client that also takes actions: it records
// them and answers with err.
type actionsClient struct {
	fakeClient
	dir string // a file "hello" lives here

	mu    sync.Mutex
	calls []string
	err   error
}

func (c *actionsClient) record(call string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	return c.err
}

func (c *actionsClient) lastCall() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.calls) == 0 {
		return ""
	}
	return c.calls[len(c.calls)-1]
}

func (c *actionsClient) RestartAlloc(_ context.Context, allocID, task string) error {
	return c.record(fmt.Sprintf("restart %s %q", allocID, task))
}

func (c *actionsClient) SignalAlloc(_ context.Context, allocID, task, signal string) error {
	return c.record(fmt.Sprintf("signal %s %q %s", allocID, task, signal))
}

func (c *actionsClient) GCAlloc(allocID string) error { return c.record("gc " + allocID) }

func (c *actionsClient) AllocFileList(allocID, path string) ([]allocdir.FileInfo, error) {
	if err := c.record("ls " + path); err != nil {
		return nil, err
	}
	return []allocdir.FileInfo{{Name: "hello", Size: 5, Mode: 0o644, ModTime: time.Unix(1700000000, 0)}, {Name: "sub", IsDir: true, Mode: fs.ModeDir | 0o755}}, nil
}

func (c *actionsClient) AllocFileStat(allocID, path string) (allocdir.FileInfo, error) {
	return allocdir.FileInfo{Name: path, Size: 5, Mode: 0o600, ContentType: "text/plain; charset=utf-8"}, c.record("stat " + path)
}

func (c *actionsClient) AllocFileOpen(allocID, path string) (*os.File, error) {
	if err := c.record("open " + path); err != nil {
		return nil, err
	}
	return os.Open(filepath.Join(c.dir, "hello"))
}

func (c *actionsClient) HostStats() (*hoststats.Stats, error) {
	return &hoststats.Stats{Uptime: 42, Timestamp: time.Unix(0, 7)}, c.record("stats " + c.nodeID)
}

func newActionsClient(t *testing.T, nodeID string) *actionsClient {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &actionsClient{fakeClient: fakeClient{nodeID: nodeID, runs: testAllocID}, dir: dir}
}

func TestClientActionsAreForwardedWithTheirBodies(t *testing.T) {
	// Agent B runs the allocation; agent A has no client.
	var bAddr string
	owner := newActionsClient(t, "node-b")
	b := fakeAPI(t, allocRPC("node-b", &bAddr), owner)
	bAddr = strings.TrimPrefix(b.URL, "http://")
	a := fakeAPI(t, allocRPC("node-b", &bAddr), nil)
	alloc := a.URL + "/v1/client/allocation/" + testAllocID

	cases := []struct {
		method, url string
		body        any
		want        string // the call B's client saw
		reply       string
	}{
		{"PUT", alloc + "/restart", api.AllocationRestartRequest{TaskName: "web"}, `restart ` + testAllocID + ` "web"`, "{}\n"},
		{"POST", alloc + "/restart", api.AllocationRestartRequest{AllTasks: true}, `restart ` + testAllocID + ` ""`, "{}\n"},
		{"PUT", alloc + "/restart", nil, `restart ` + testAllocID + ` ""`, "{}\n"},
		{"PUT", alloc + "/signal", api.AllocSignalRequest{Task: "web", Signal: "SIGUSR1"}, `signal ` + testAllocID + ` "web" SIGUSR1`, "{}\n"},
		{"GET", alloc + "/gc", nil, "gc " + testAllocID, ""},
		{"PUT", alloc + "/gc", nil, "gc " + testAllocID, ""},
		{"GET", a.URL + "/v1/client/fs/ls/" + testAllocID, nil, "ls /", ""},
		{"GET", a.URL + "/v1/client/fs/ls/" + testAllocID + "?path=alloc/logs", nil, "ls alloc/logs", ""},
		{"GET", a.URL + "/v1/client/fs/stat/" + testAllocID + "?path=web/local/x", nil, "stat web/local/x", ""},
		{"GET", a.URL + "/v1/client/fs/cat/" + testAllocID + "?path=web/x", nil, "open web/x", "hello"},
		{"GET", a.URL + "/v1/client/fs/readat/" + testAllocID + "?path=web/x&offset=1&limit=3", nil, "open web/x", "ell"},
		{"GET", a.URL + "/v1/client/fs/readat/" + testAllocID + "?path=web/x&offset=2", nil, "open web/x", "llo"},
		{"GET", a.URL + "/v1/client/fs/readat/" + testAllocID + "?path=web/x&offset=99&limit=3", nil, "open web/x", ""},
		{"GET", a.URL + "/v1/client/stats?node_id=node-b", nil, "stats node-b", ""},
	}
	for _, tc := range cases {
		resp, body := call(t, tc.method, tc.url, tc.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", tc.method, tc.url, resp.StatusCode, body)
		}
		if got := owner.lastCall(); got != tc.want {
			t.Errorf("%s %s: the owner saw %q, want %q", tc.method, tc.url, got, tc.want)
		}
		if tc.reply != "" && string(body) != tc.reply {
			t.Errorf("%s %s: answered %q, want %q", tc.method, tc.url, body, tc.reply)
		}
	}

	var files []api.AllocFileInfo
	callOK(t, "GET", a.URL+"/v1/client/fs/ls/"+testAllocID, nil, &files)
	if len(files) != 2 || files[0].FileMode != "-rw-r--r--" || files[1].FileMode != "drwxr-xr-x" || !files[1].IsDir ||
		!files[0].ModTime.Equal(time.Unix(1700000000, 0)) {
		t.Fatalf("listing %+v", files)
	}
	var st api.HostStats
	callOK(t, "GET", a.URL+"/v1/client/stats?node_id=node-b", nil, &st)
	if st.Uptime != 42 || st.Timestamp != 7 || st.Memory == nil || st.CPU == nil || st.DiskStats == nil || st.DeviceStats == nil || st.AllocDirStats == nil {
		t.Fatalf("stats %+v", st)
	}
}

func TestClientActionParamsAreCheckedBeforeAnythingHappens(t *testing.T) {
	var none string
	c := newActionsClient(t, "node-a")
	srv := fakeAPI(t, allocRPC("node-a", &none), c)
	alloc := srv.URL + "/v1/client/allocation/" + testAllocID
	fsURL := func(op, q string) string { return srv.URL + "/v1/client/fs/" + op + "/" + testAllocID + q }
	cases := []struct {
		method, url string
		body        any
		code        int
		want        string
	}{
		{"PUT", alloc + "/restart", map[string]any{"TaskName": "web", "AllTasks": true}, 400, "exclusive"},
		{"PUT", alloc + "/restart", `{"TaskName": 3}`, 400, `"TaskName"`},
		{"PUT", alloc + "/restart", `{"TaskName":`, 400, "not valid JSON"},
		{"PUT", alloc + "/signal", map[string]any{"Task": "web"}, 400, "Signal is required"},
		{"PUT", alloc + "/signal", map[string]any{"Signal": "SIGFOO"}, 400, `Signal "SIGFOO" is not a signal Drover can send: use one of SIGABRT`},
		{"GET", alloc + "/signal", nil, 405, ""},
		{"GET", fsURL("stat", ""), nil, 400, "path is required"},
		{"GET", fsURL("cat", ""), nil, 400, "path is required"},
		{"GET", fsURL("readat", "?offset=1"), nil, 400, "path is required"},
		{"GET", fsURL("readat", "?path=x&offset=-1"), nil, 400, "offset -1 must not be negative"},
		{"GET", fsURL("readat", "?path=x&offset=one"), nil, 400, `offset "one" must be an integer`},
		{"GET", fsURL("readat", "?path=x&limit=1.5"), nil, 400, `limit "1.5" must be an integer`},
		{"PUT", srv.URL + "/v1/client/allocation/bbbb/restart", nil, 404, "not found"},
		{"GET", srv.URL + "/v1/client/fs/ls/bbbb", nil, 404, "not found"},
	}
	for _, tc := range cases {
		resp, body := call(t, tc.method, tc.url, tc.body)
		requireStatus(t, resp, body, tc.code, tc.want)
	}
	if got := c.lastCall(); got != "" {
		t.Fatalf("a refused request reached the client: %q", got)
	}
}

func TestClientErrorsMapToStatuses(t *testing.T) {
	var none string
	c := newActionsClient(t, "node-a")
	srv := fakeAPI(t, allocRPC("node-a", &none), c)
	cases := []struct {
		err  error
		code int
	}{
		{fmt.Errorf("%w: task \"web\" is dead", taskrunner.ErrTaskNotRunning), 409},
		{fmt.Errorf("%w: allocation x is running; stop it first", client.ErrAllocNotTerminal), 409},
		{fmt.Errorf("%w (task \"web\" runs on mock_driver)", drivers.ErrSignalsUnsupported), 400},
		{fmt.Errorf("%w \"nope\" in alloc x", client.ErrUnknownTask), 404},
		{fmt.Errorf("\"../x\": %w", allocdir.ErrPathEscapes), 400},
		{fmt.Errorf("x: %w", allocdir.ErrNotDir), 400},
		{fmt.Errorf("x: %w", allocdir.ErrNotRegular), 400},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}, 404},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrPermission}, 403},
		{fmt.Errorf("\"web/secrets/token\": %w", allocdir.ErrSecretsDir), 403},
		{errors.New("disk on fire"), 500},
	}
	for _, tc := range cases {
		c.mu.Lock()
		c.err = tc.err
		c.mu.Unlock()
		for _, req := range [][2]string{
			{"PUT", "/v1/client/allocation/" + testAllocID + "/restart"},
			{"GET", "/v1/client/fs/cat/" + testAllocID + "?path=x"},
		} {
			resp, body := call(t, req[0], srv.URL+req[1], nil)
			requireStatus(t, resp, body, tc.code, tc.err.Error())
		}
	}
}

func TestAnAgentWithoutAClientAnswersForNoNode(t *testing.T) {
	srv := fakeAPI(t, fakeRPC{}, nil)
	resp, body := call(t, "GET", srv.URL+"/v1/client/stats", nil)
	requireStatus(t, resp, body, 400, "node_id")

	// A client that cannot act says so rather than pretending.
	var none string
	plain := fakeAPI(t, allocRPC("node-a", &none), &fakeClient{nodeID: "node-a"})
	resp, body = call(t, "PUT", plain.URL+"/v1/client/allocation/"+testAllocID+"/restart", nil)
	requireStatus(t, resp, body, 501, "cannot act on allocations")

	// A forwarded request for another node is not forwarded again.
	c := fakeAPI(t, allocRPC("node-b", &none), newActionsClient(t, "node-c"))
	req, _ := http.NewRequest("GET", c.URL+"/v1/client/stats?node_id=node-b", nil)
	req.Header.Set(forwardedHeader, "1")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("forwarded twice: status %d", r.StatusCode)
	}
}

func TestAnActionForAnUnreachableNodeNamesIt(t *testing.T) {
	unreachable := "127.0.0.1:1"
	a := fakeAPI(t, allocRPC("node-x", &unreachable), nil)
	for _, req := range [][2]string{
		{"PUT", "/v1/client/allocation/" + testAllocID + "/restart"},
		{"PUT", "/v1/client/allocation/" + testAllocID + "/signal"},
		{"GET", "/v1/client/allocation/" + testAllocID + "/gc"},
		{"GET", "/v1/client/fs/ls/" + testAllocID},
		{"GET", "/v1/client/fs/cat/" + testAllocID + "?path=x"},
		{"GET", "/v1/client/stats?node_id=node-x"},
	} {
		var body any
		if strings.HasSuffix(req[1], "/signal") {
			body = api.AllocSignalRequest{Signal: "SIGHUP"}
		}
		resp, raw := call(t, req[0], a.URL+req[1], body)
		requireStatus(t, resp, raw, 500, "forwarding to node node-x (status down) at 127.0.0.1:1")
	}
}

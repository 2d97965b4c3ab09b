package api

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

const actionAlloc = "a1b2c3d4-0000-4000-8000-000000000001"

func TestAllocActionsSendNomadsRequests(t *testing.T) {
	f, c := newFakeAgent(t)
	base := "/v1/client/allocation/" + actionAlloc
	for _, route := range []string{"PUT " + base + "/restart", "PUT " + base + "/signal", "GET " + base + "/gc"} {
		f.on(route, reply{Body: "{}"})
	}
	cases := []struct {
		name, method, path, body string
		call                     func() error
	}{
		{"restart one task", "PUT", base + "/restart", `{"TaskName":"web","AllTasks":false}`,
			func() error { return c.Allocations().Restart(actionAlloc, "web", nil) }},
		{"restart all tasks", "PUT", base + "/restart", `{"TaskName":"","AllTasks":true}`,
			func() error { return c.Allocations().RestartAllTasks(actionAlloc, nil) }},
		{"signal", "PUT", base + "/signal", `{"Task":"web","Signal":"SIGHUP"}`,
			func() error { return c.Allocations().Signal(actionAlloc, "web", "SIGHUP", nil) }},
		{"gc", "GET", base + "/gc", "",
			func() error { return c.Allocations().GC(actionAlloc, nil) }},
	}
	for _, tc := range cases {
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := f.last()
		if got.Method != tc.method || got.Path != tc.path || got.Body != tc.body {
			t.Errorf("%s: sent %s %s %q, want %s %s %q", tc.name, got.Method, got.Path, got.Body, tc.method, tc.path, tc.body)
		}
	}
	f.on("PUT "+base+"/restart", reply{Status: 409, Body: "task is not running"})
	err := c.Allocations().Restart(actionAlloc, "web", nil)
	var ue *UnexpectedResponseError
	if !errors.As(err, &ue) || ue.StatusCode != 409 || !strings.Contains(err.Error(), "task is not running") {
		t.Fatalf("refused restart: %v", err)
	}
}

func TestAllocFSAndNodeStats(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/client/fs/ls/"+actionAlloc, reply{Body: `[{"Name":"alloc","IsDir":true,"Size":4096,"FileMode":"drwxr-xr-x","ModTime":"2024-05-01T12:00:00Z"}]`})
	f.on("GET /v1/client/fs/stat/"+actionAlloc, reply{Body: `{"Name":"x","Size":3,"FileMode":"-rw-r--r--","ContentType":"text/plain; charset=utf-8"}`})
	f.on("GET /v1/client/fs/cat/"+actionAlloc, reply{Body: "abc"})
	f.on("GET /v1/client/fs/readat/"+actionAlloc, reply{Body: "b"})
	f.on("GET /v1/client/stats", reply{Body: `{"Memory":{"Total":10},"CPU":[{"CPU":"cpu0","Idle":90}],"DiskStats":[],"AllocDirStats":{"Size":5},"Uptime":7,"CPUTicksConsumed":1.5,"Timestamp":9}`})

	files, _, err := c.AllocFS().List(actionAlloc, "/", &QueryOptions{Params: map[string]string{"keep": "me"}})
	if err != nil || len(files) != 1 || !files[0].IsDir || !files[0].ModTime.Equal(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("list: %v %+v", err, files)
	}
	if q := f.last().Query; q.Get("path") != "/" || q.Get("keep") != "me" {
		t.Fatalf("list query %v", q)
	}
	fi, _, err := c.AllocFS().Stat(actionAlloc, "x", nil)
	if err != nil || fi.Size != 3 || fi.ContentType == "" || f.last().Query.Get("path") != "x" {
		t.Fatalf("stat: %v %+v", err, fi)
	}
	read := func(r io.ReadCloser, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		return string(b)
	}
	if got := read(c.AllocFS().Cat(actionAlloc, "x", nil)); got != "abc" {
		t.Fatalf("cat %q", got)
	}
	if got := read(c.AllocFS().ReadAt(actionAlloc, "x", 1, 1, nil)); got != "b" {
		t.Fatalf("readat %q", got)
	}
	if q := f.last().Query; q.Get("path") != "x" || q.Get("offset") != "1" || q.Get("limit") != "1" {
		t.Fatalf("readat query %v", q)
	}

	st, err := c.Nodes().Stats("node-1", nil)
	if err != nil || st.Memory.Total != 10 || st.CPU[0].Idle != 90 || st.AllocDirStats.Size != 5 || st.Uptime != 7 || st.Timestamp != 9 {
		t.Fatalf("stats: %v %+v", err, st)
	}
	if q := f.last().Query; q.Get("node_id") != "node-1" {
		t.Fatalf("stats query %v", q)
	}
	if _, err := c.Nodes().Stats("", nil); err != nil || f.last().Query.Has("node_id") {
		t.Fatalf("own stats: %v %v", err, f.last().Query)
	}
}

// TestClientShapesMatchNomads holds the request and answer shapes of the
// client endpoints to Nomad's: each side decodes what the other encodes.
func TestClientShapesMatchNomads(t *testing.T) {
	same := func(name string, drover, nomadV any) {
		t.Helper()
		d, _ := json.Marshal(drover)
		n, _ := json.Marshal(nomadV)
		if string(d) != string(n) {
			t.Errorf("%s: Drover sends %s, Nomad %s", name, d, n)
		}
	}
	same("restart", AllocationRestartRequest{TaskName: "web", AllTasks: true}, nomad.AllocationRestartRequest{TaskName: "web", AllTasks: true})
	same("file info", AllocFileInfo{Name: "x", Size: 1, FileMode: "-rw-r--r--", ModTime: time.Unix(1, 0).UTC(), ContentType: "text/plain"},
		nomad.AllocFileInfo{Name: "x", Size: 1, FileMode: "-rw-r--r--", ModTime: time.Unix(1, 0).UTC(), ContentType: "text/plain"})

	var sig nomad.AllocSignalRequest
	if err := json.Unmarshal(mustMarshal(t, AllocSignalRequest{Task: "web", Signal: "SIGHUP"}), &sig); err != nil || sig.Task != "web" || sig.Signal != "SIGHUP" {
		t.Fatalf("signal request as Nomad reads it: %v %+v", err, sig)
	}
	full := HostStats{
		Memory: &HostMemoryStats{Total: 1, Available: 2, Used: 3, Free: 4}, CPU: []*HostCPUStats{{CPU: "cpu0", User: 1, System: 2, Idle: 97}},
		DiskStats:     []*HostDiskStats{{Device: "/dev/sda1", Mountpoint: "/", Size: 10, Used: 5, Available: 5, UsedPercent: 50, InodesUsedPercent: 1}},
		AllocDirStats: &HostDiskStats{Device: "/dev/sda1", Mountpoint: "/", Size: 10}, DeviceStats: []*DeviceGroupStats{},
		Uptime: 100, CPUTicksConsumed: 250.5, Timestamp: 123,
	}
	var viaNomad nomad.HostStats
	if err := json.Unmarshal(mustMarshal(t, full), &viaNomad); err != nil {
		t.Fatal(err)
	}
	var back HostStats
	if err := json.Unmarshal(mustMarshal(t, viaNomad), &back); err != nil {
		t.Fatal(err)
	}
	back.Timestamp = full.Timestamp // Nomad's client type has no Timestamp
	if string(mustMarshal(t, back)) != string(mustMarshal(t, full)) {
		t.Fatalf("host stats through Nomad's type:\n%s\nwant\n%s", mustMarshal(t, back), mustMarshal(t, full))
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

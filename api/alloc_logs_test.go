package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
)

func frame(data string, offset int) string {
	return fmt.Sprintf(`{"Data":%q,"File":"alloc/logs/server.stdout.0","Offset":%d}`,
		base64.StdEncoding.EncodeToString([]byte(data)), offset)
}

func TestLogsDecodesFramesAndSkipsHeartbeats(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/client/fs/logs/a1", reply{Body: frame("hello ", 0) + "{}" + "\n" + frame("world\n", 6)})
	rc, err := c.Allocations().Logs(context.Background(), "a1",
		LogsOptions{Task: "server", Type: "stderr", Follow: true, Origin: OriginEnd, Offset: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "hello world\n" {
		t.Errorf("log %q", got)
	}
	q := f.last().Query
	want := map[string]string{"task": "server", "type": "stderr", "follow": "true", "origin": "end", "offset": "100"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("query %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if q.Has("plain") {
		t.Error("plain sent without being asked for")
	}
}

func TestLogsPlainPassesBytesThrough(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/client/fs/logs/a1", reply{Body: "raw bytes\n"})
	rc, err := c.Allocations().Logs(context.Background(), "a1", LogsOptions{Task: "server", Plain: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, _ := io.ReadAll(rc)
	if string(got) != "raw bytes\n" || f.last().Query.Get("plain") != "true" {
		t.Errorf("log %q query %v", got, f.last().Query)
	}
}

func TestLogsRejectsBadOptionsBeforeSending(t *testing.T) {
	_, c := newFakeAgent(t)
	for _, opts := range []LogsOptions{{}, {Task: "t", Type: "stdin"}, {Task: "t", Origin: "middle"}} {
		if _, err := c.Allocations().Logs(context.Background(), "a1", opts, nil); err == nil {
			t.Errorf("options %+v accepted", opts)
		}
	}
}

func TestLogsReportsAMissingAllocation(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/client/fs/logs/a1", reply{Status: 404, Body: "unknown allocation"})
	_, err := c.Allocations().Logs(context.Background(), "a1", LogsOptions{Task: "t"}, nil)
	if !IsNotFound(err) || !strings.Contains(err.Error(), "unknown allocation") {
		t.Errorf("err %v", err)
	}
}

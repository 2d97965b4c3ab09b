package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/rpc"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

const testAllocID = "aaaaaaaa-0000-4000-8000-000000000001"

// fakeClient serves logs from memory. When follow is asked, the log is a
// pipe the test writes to; closed reports the handler closing it.
type fakeClient struct {
	nodeID string
	logs   map[string]string // "task/type" -> content
	pipe   *io.PipeReader
	closed chan struct{}
	asked  []string
	// runs is the ID of an allocation the client knows it runs: requests
	// for it are answered without asking the servers (LocalAlloc).
	runs string
}

func (c *fakeClient) NodeID() string  { return c.nodeID }
func (c *fakeClient) Shutdown() error { return nil }

// LocalAlloc knows the allocation the client runs; others are located
// through the servers (Alloc.Locate), as for an allocation the client
// has not received yet.
func (c *fakeClient) LocalAlloc(id string) *structs.Allocation {
	if c.runs == "" || id != c.runs {
		return nil
	}
	return &structs.Allocation{ID: id, Namespace: structs.DefaultNamespace, NodeID: c.nodeID}
}

// ResolveToken answers "ACLs are off".
func (c *fakeClient) ResolveToken(context.Context, string) (*acl.ACL, error) { return nil, nil }
func (c *fakeClient) AllocStats(allocID string) (any, error) {
	return map[string]any{"ResourceUsage": map[string]any{"MemoryStats": map[string]any{"RSS": 1024}}, "Node": c.nodeID}, nil
}

func (c *fakeClient) AllocLogs(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error) {
	c.asked = append(c.asked, strings.Join([]string{allocID, task, logType, origin}, " "))
	if follow && c.pipe != nil {
		return &notifyCloser{ReadCloser: c.pipe, closed: c.closed}, nil
	}
	content, ok := c.logs[task+"/"+logType]
	if !ok {
		return nil, errors.New("task " + task + " not found")
	}
	if origin == "end" {
		content = content[len(content)-int(offset):]
	} else {
		content = content[offset:]
	}
	return io.NopCloser(strings.NewReader(content)), nil
}

type notifyCloser struct {
	io.ReadCloser
	closed chan struct{}
}

func (n *notifyCloser) Close() error {
	close(n.closed)
	return n.ReadCloser.Close()
}

// allocRPC answers the reads the client endpoints make: the allocation
// lives on ownerNode, whose agent is at ownerHTTP.
func allocRPC(ownerNode string, ownerHTTP *string) fakeRPC {
	return fakeRPC{
		"Alloc.GetAlloc": func(args, reply any) error {
			if args.(*structs.AllocSpecificRequest).AllocID != testAllocID {
				return nil
			}
			reply.(*structs.SingleAllocResponse).Alloc = &structs.Allocation{ID: testAllocID, NodeID: ownerNode}
			return nil
		},
		"Alloc.Locate": func(args, reply any) error {
			id := args.(*structs.AllocLocateRequest).AllocID
			if !strings.HasPrefix(testAllocID, id) {
				return rpc.ServerError(fmt.Sprintf("allocation %q: not found", id))
			}
			*reply.(*structs.AllocLocateResponse) = structs.AllocLocateResponse{
				AllocID: testAllocID, Namespace: structs.DefaultNamespace, NodeID: ownerNode,
				NodeHTTPAddr: *ownerHTTP, NodeStatus: structs.NodeStatusDown,
			}
			return nil
		},
		"Alloc.List": func(args, reply any) error {
			if strings.HasPrefix(testAllocID, args.(*structs.AllocListRequest).Prefix) {
				reply.(*structs.AllocListResponse).Allocations = []*structs.AllocListStub{{ID: testAllocID}}
			}
			return nil
		},
		"Node.GetNode": func(args, reply any) error {
			reply.(*structs.SingleNodeResponse).Node = &structs.Node{ID: ownerNode, HTTPAddr: *ownerHTTP, Status: structs.NodeStatusDown}
			return nil
		},
	}
}

func TestLogsPlainAndFramed(t *testing.T) {
	var none string
	client := &fakeClient{nodeID: "node-a", logs: map[string]string{"app/stdout": "hello\nworld\n", "app/stderr": "oops\n"}}
	srv := fakeAPI(t, allocRPC("node-a", &none), client)

	resp, body := call(t, "GET", srv.URL+"/v1/client/fs/logs/aaaa?task=app&type=stdout&plain=true", nil)
	requireStatus(t, resp, body, 200, "hello\nworld\n")

	resp, body = call(t, "GET", srv.URL+"/v1/client/fs/logs/"+testAllocID+"?task=app&type=stderr", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("framed: %d %s", resp.StatusCode, body)
	}
	var frame struct {
		Offset int64
		Data   []byte
		File   string
	}
	if err := json.Unmarshal(body, &frame); err != nil {
		t.Fatalf("frame %s: %v", body, err)
	}
	if string(frame.Data) != "oops\n" || frame.Offset != 5 || frame.File != "alloc/logs/app.stderr" {
		t.Fatalf("frame: %+v", frame)
	}

	resp, body = call(t, "GET", srv.URL+"/v1/client/fs/logs/"+testAllocID+"?task=app&type=stdout&origin=end&offset=6&plain=true", nil)
	requireStatus(t, resp, body, 200, "world\n")
	if client.asked[len(client.asked)-1] != testAllocID+" app stdout end" {
		t.Fatalf("client asked %q", client.asked)
	}

	for q, want := range map[string]string{
		"type=stdout":                    "task is required",
		"task=app&type=stdin":            "must be stdout or stderr",
		"task=app&type=stdout&origin=up": "must be start or end",
		"task=app&type=stdout&offset=-1": "non-negative",
	} {
		resp, body := call(t, "GET", srv.URL+"/v1/client/fs/logs/"+testAllocID+"?"+q, nil)
		requireStatus(t, resp, body, 400, want)
	}
	resp, body = call(t, "GET", srv.URL+"/v1/client/fs/logs/bbbb?task=app&type=stdout", nil)
	requireStatus(t, resp, body, 404, "not found")
}

func TestFollowedLogStreamsAndStopsWhenTheCallerLeaves(t *testing.T) {
	var none string
	pr, pw := io.Pipe()
	client := &fakeClient{nodeID: "node-a", pipe: pr, closed: make(chan struct{})}
	srv := fakeAPI(t, allocRPC("node-a", &none), client)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/client/fs/logs/"+testAllocID+"?task=app&type=stdout&follow=true&plain=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	for _, want := range []string{"one\n", "two\n"} {
		go pw.Write([]byte(want))
		got, err := lines.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("streamed %q, %v; want %q", got, err, want)
		}
	}
	cancel()
	select {
	case <-client.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the log reader was not closed after the caller went away")
	}
}

func TestClientRequestsAreForwardedToTheAllocsNode(t *testing.T) {
	// Agent B runs the allocation; agent A does not (it has no client).
	var bAddr string
	owner := &fakeClient{nodeID: "node-b", logs: map[string]string{"app/stdout": "from b\n"}, runs: testAllocID}
	b := fakeAPI(t, allocRPC("node-b", &bAddr), owner)
	bAddr = strings.TrimPrefix(b.URL, "http://")
	a := fakeAPI(t, allocRPC("node-b", &bAddr), nil)

	resp, body := call(t, "GET", a.URL+"/v1/client/fs/logs/"+testAllocID+"?task=app&type=stdout&plain=true", nil)
	requireStatus(t, resp, body, 200, "from b\n")

	var stats map[string]any
	callOK(t, "GET", a.URL+"/v1/client/allocation/"+testAllocID+"/stats", nil, &stats)
	if stats["Node"] != "node-b" {
		t.Fatalf("stats came from %v", stats["Node"])
	}

	// A node whose servers' view is stale does not forward again.
	c := fakeAPI(t, allocRPC("node-b", &bAddr), &fakeClient{nodeID: "node-c"})
	req, _ := http.NewRequest("GET", c.URL+"/v1/client/allocation/"+testAllocID+"/stats", nil)
	req.Header.Set(forwardedHeader, "1")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("forwarded twice: status %d", r.StatusCode)
	}

	// An unreachable node is a 500 that names it.
	unreachable := "127.0.0.1:1"
	d := fakeAPI(t, allocRPC("node-x", &unreachable), nil)
	resp, body = call(t, "GET", d.URL+"/v1/client/allocation/"+testAllocID+"/stats", nil)
	requireStatus(t, resp, body, 500, "node-x")
}

package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/structs"
)

// A request body that stops arriving held its connection, its goroutine
// and everything read of it so far for as long as the caller kept the
// connection open: against a running agent, 300 connections each sending
// most of a 2 MB job body and then nothing held 800 MB for good. Every
// route now gives a body bodyTimeout to arrive; one that does not is
// answered 408 and its connection closed.
func TestARequestBodyThatStopsArrivingIsGivenUp(t *testing.T) {
	routes := []string{
		"/v1/jobs",                             // a job body (handleJob)
		"/v1/acl/bootstrap",                    // any other body (handle)
		"/v1/client/allocation/x/restart",      // a body a route reads itself (handleFunc)
		"/v1/operator/scheduler/configuration", // a small body
	}
	for _, route := range routes {
		t.Run(route, func(t *testing.T) {
			s := &httpAPI{
				rpc:         fakeRPC{},
				logger:      hclog.NewNullLogger(),
				info:        func() AgentInfo { return AgentInfo{Config: config.Dev()} },
				bodyTimeout: 300 * time.Millisecond,
			}
			srv := httptest.NewServer(s.handler())
			t.Cleanup(srv.Close)

			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"Job\": {", route)

			// The answer comes once the body is given up, well before the
			// test's own deadline.
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer to a stalled body: %v", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("a stalled body got %s, want 408", resp.Status)
			}
			if !resp.Close {
				t.Fatal("the connection of a stalled body stays open")
			}
		})
	}
}

// ctxRPC answers Job.Register once released, or fails it when the
// request's context ends first: what a real call does when net/http
// cancels the request under it.
type ctxRPC struct {
	release chan struct{}
}

func (c ctxRPC) RPC(ctx context.Context, method string, args, reply any) error {
	select {
	case <-c.release:
		reply.(*structs.JobRegisterResponse).Index = 2
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A body that arrives in time is read as before, and the deadline is gone
// once it has: a handler that read its whole body may then take longer
// than the body timeout (a register waiting for its raft entry). A
// deadline left behind would fire under net/http's read for the next
// request, which cancels the request in flight.
func TestTheBodyDeadlineEndsWithTheBody(t *testing.T) {
	rpcs := ctxRPC{release: make(chan struct{})}
	s := &httpAPI{
		rpc:         rpcs,
		logger:      hclog.NewNullLogger(),
		info:        func() AgentInfo { return AgentInfo{Config: config.Dev()} },
		bodyTimeout: 300 * time.Millisecond,
	}
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)

	body := `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`
	go func() {
		// Answer once the deadline, had it stayed, would have fired
		// twice over: the waiting is what is tested.
		<-time.After(3 * s.bodyTimeout)
		close(rpcs.release)
	}()
	resp, err := http.Post(srv.URL+"/v1/jobs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("a register that outlived the body timeout got %s: %s", resp.Status, msg)
	}
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/stream"
	"github.com/drover-sched/drover/structs"
)

// streamTimeout bounds each wait for a stream's frames: the machine is
// shared and slow, so it is generous; a passing test never waits it out.
const streamTimeout = 60 * time.Second

type wireFrame struct {
	Index  uint64
	Error  string
	Events []struct {
		Topic, Type, Key, Namespace string
		FilterKeys                  []string
		Index                       uint64
		Payload                     map[string]json.RawMessage
	}
}

// nextFrame returns the next frame that is not a heartbeat, failing the
// test if the stream ends or none comes in time.
func nextFrame(t *testing.T, lines <-chan string) wireFrame {
	t.Helper()
	deadline := time.After(streamTimeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			var f wireFrame
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("frame %q is not JSON: %v", line, err)
			}
			if f.Index == 0 && f.Error == "" && len(f.Events) == 0 {
				continue
			}
			return f
		case <-deadline:
			t.Fatalf("no frame within %s", streamTimeout)
		}
	}
}

// framesUntil reads frames until one holds an event for which done is
// true, and returns all of them.
func framesUntil(t *testing.T, lines <-chan string, done func(topic, typ, key string) bool) []wireFrame {
	t.Helper()
	var out []wireFrame
	for {
		f := nextFrame(t, lines)
		if f.Error != "" {
			t.Fatalf("the stream was closed: %s", f.Error)
		}
		out = append(out, f)
		for _, e := range f.Events {
			if done(e.Topic, e.Type, e.Key) {
				return out
			}
		}
	}
}

func TestEventStreamWorksWithNomadsGoClient(t *testing.T) {
	a := serverAgent(t)
	c := nomadClient(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := c.EventStream().Stream(ctx, map[nomadapi.Topic][]string{
		nomadapi.TopicJob:        {"web"},
		nomadapi.TopicNode:       {},
		nomadapi.TopicAllocation: {"web"},
		nomadapi.TopicEvaluation: {"web"},
	}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := registerNode(t, a, nil)
	registerJob(t, a, mockJob("other", 1))
	registerJob(t, a, mockJob("web", 1))

	// Each topic's payload decodes into Nomad's own type.
	saw := map[nomadapi.Topic]bool{}
	deadline := time.After(streamTimeout)
	for len(saw) < 4 {
		select {
		case evs, ok := <-ch:
			if !ok {
				t.Fatal("the stream ended")
			}
			if evs.Err != nil {
				t.Fatal(evs.Err)
			}
			for _, e := range evs.Events {
				if e.Index != evs.Index {
					t.Fatalf("event index %d in frame %d", e.Index, evs.Index)
				}
				switch e.Topic {
				case nomadapi.TopicJob:
					j, err := e.Job()
					if err != nil {
						t.Fatalf("decoding the job payload: %v", err)
					}
					if *j.ID != "web" || e.Key != "web" {
						t.Fatalf("topic Job:web delivered job %s", *j.ID)
					}
					if e.Type == structs.TypeJobRegistered && len(j.TaskGroups) == 1 && *j.TaskGroups[0].Name == "web" {
						saw[e.Topic] = true
					}
				case nomadapi.TopicNode:
					n, err := e.Node()
					if err != nil {
						t.Fatalf("decoding the node payload: %v", err)
					}
					if n.ID == node.ID && e.Type == structs.TypeNodeRegistration {
						saw[e.Topic] = true
					}
				case nomadapi.TopicAllocation:
					al, err := e.Allocation()
					if err != nil {
						t.Fatalf("decoding the allocation payload: %v", err)
					}
					if al.JobID != "web" || al.NodeID != node.ID || al.Job != nil {
						t.Fatalf("allocation %s of job %s on %s (job included: %v)", al.ID, al.JobID, al.NodeID, al.Job != nil)
					}
					if e.Type == structs.TypePlanResult {
						saw[e.Topic] = true
					}
				case nomadapi.TopicEvaluation:
					ev, err := e.Evaluation()
					if err != nil {
						t.Fatalf("decoding the evaluation payload: %v", err)
					}
					if ev.JobID != "web" {
						t.Fatalf("topic Evaluation:web delivered an eval of job %s", ev.JobID)
					}
					saw[e.Topic] = true
				default:
					t.Fatalf("topic %s was not asked for", e.Topic)
				}
			}
		case <-deadline:
			t.Fatalf("saw only %v within %s", saw, streamTimeout)
		}
	}
}

func TestEventStreamResumesFromAnIndex(t *testing.T) {
	a := serverAgent(t)
	resp, lines := openStream(t, a.URL+"/v1/event/stream?topic=Job", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	registerJob(t, a, mockJob("one", 1))
	registerJob(t, a, mockJob("two", 1))
	frames := framesUntil(t, lines, func(topic, typ, key string) bool { return key == "two" })
	first := frames[0]
	if first.Events[0].Key != "one" || first.Events[0].Type != structs.TypeJobRegistered {
		t.Fatalf("first frame %+v", first)
	}
	last := frames[len(frames)-1].Index

	// Resuming from the first frame's index gives that frame again, then
	// the rest, in order; resuming after the last gives nothing old.
	_, again := openStream(t, fmt.Sprintf("%s/v1/event/stream?topic=Job&index=%d", a.URL, first.Index), "")
	replay := framesUntil(t, again, func(topic, typ, key string) bool { return key == "two" })
	if len(replay) != len(frames) {
		t.Fatalf("resumed stream has %d frames up to job two, the live one had %d", len(replay), len(frames))
	}
	for i := range replay {
		if replay[i].Index != frames[i].Index {
			t.Fatalf("resumed frame %d has index %d, live %d", i, replay[i].Index, frames[i].Index)
		}
	}
	_, after := openStream(t, fmt.Sprintf("%s/v1/event/stream?topic=Job&index=%d", a.URL, last+1), "")
	registerJob(t, a, mockJob("three", 1))
	if f := nextFrame(t, after); f.Events[0].Key != "three" {
		t.Fatalf("a stream from after job two began with %+v", f.Events[0])
	}
}

func TestEventStreamACLs(t *testing.T) {
	a, mgmt := aclDevAgent(t)
	reader := putPolicy(t, a, mgmt, "readers", `namespace "default" { policy = "read" }`)
	for _, tc := range []struct {
		name, token, query string
		want               int
	}{
		{"anonymous, every topic", "", "", 403},
		{"a reader, every topic", reader, "", 403},
		{"a reader, topic *", reader, "topic=*", 403},
		{"a reader, topic Node without node read", reader, "topic=Node", 403},
		{"a reader, topic Job in another namespace", reader, "topic=Job&namespace=prod", 403},
		{"a reader, topic Job", reader, "topic=Job:web", 200},
		{"a reader, topics Allocation and Evaluation in every namespace it may read", reader, "topic=Allocation&topic=Evaluation&namespace=*", 200},
		{"management, every topic", mgmt, "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, lines := openStream(t, a.URL+"/v1/event/stream?"+tc.query, tc.token)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 403 {
				body := <-lines
				if !strings.Contains(body, "Permission denied") {
					t.Fatalf("body %q", body)
				}
			}
		})
	}

	// A stream ends when its token is deleted, and says why.
	var tok structs.ACLToken
	callOKAs(t, mgmt, "PUT", a.URL+"/v1/acl/token", map[string]any{"Name": "short", "Type": "client", "Policies": []string{"readers"}}, &tok)
	_, lines := openStream(t, a.URL+"/v1/event/stream?topic=Job", tok.SecretID)
	waitUntil(t, "the stream to subscribe", func() bool { return eventBroker(t, a).Subscribers() > 0 })
	resp, body := callAs(t, mgmt, "DELETE", a.URL+"/v1/acl/token/"+tok.AccessorID, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("deleting the token: %d %s", resp.StatusCode, body)
	}
	f := nextFrame(t, lines)
	if !strings.Contains(f.Error, "ACL token was deleted") {
		t.Fatalf("last frame %+v", f)
	}
	for range lines {
	}
}

func callOKAs(t *testing.T, token, method, url string, body, out any) {
	t.Helper()
	resp, b := callAs(t, token, method, url, body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

func eventBroker(t *testing.T, a *TestAgent) *stream.Broker {
	t.Helper()
	s, ok := a.server.(interface{ EventBroker() *stream.Broker })
	if !ok {
		t.Fatal("the agent's server has no event broker")
	}
	return s.EventBroker()
}

// TestEventStreamDropsAConsumerThatNeverReads: a caller that opens a
// stream and never reads it is dropped once the server's buffer has moved
// past it; raft keeps applying meanwhile and a consumer that reads gets
// every event.
func TestEventStreamDropsAConsumerThatNeverReads(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.ServerHook = func(sc *nomad.Config) { sc.EventBufferEvents = 64 }
	})
	broker := eventBroker(t, a)

	// The stuck consumer: a raw connection with a small receive buffer
	// that sends the request and never reads a byte.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		// Set before connecting, so the advertised window stays small.
		return rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
	}}
	conn, err := d.Dial("tcp", a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/event/stream?topic=Job HTTP/1.1\r\nHost: %s\r\n\r\n", a.Addr)
	waitUntil(t, "the stuck stream to subscribe", func() bool { return broker.Subscribers() == 1 })

	// The reading consumer follows the evaluations, which are small, so
	// it keeps up however slow the machine.
	_, lines := openStream(t, a.URL+"/v1/event/stream?topic=Evaluation", "")
	waitUntil(t, "the reading stream to subscribe", func() bool { return broker.Subscribers() == 2 })

	// Large jobs fill the stuck connection's buffers quickly; once they
	// are full its stream stops reading the server's buffer, and the
	// events that keep coming push it out. Register until then (however
	// slow the machine), at most for the deadline.
	big := strings.Repeat("x", 200<<10)
	start := raftIndex(t, a)
	got := map[string]bool{}
	jobs := 0
	deadline := time.Now().Add(3 * time.Minute)
	for broker.Subscribers() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the stuck consumer was not dropped after %d jobs of 200 KiB", jobs)
		}
		j := mockJob(fmt.Sprintf("big-%03d", jobs), 1)
		j.Meta = map[string]string{"blob": big}
		registerJob(t, a, j)
		jobs++
		for _, f := range drainFrames(lines) {
			for _, e := range f.Events {
				got[e.FilterKeys[0]] = true
			}
		}
	}
	t.Logf("the stuck consumer was dropped after %d jobs", jobs)
	if end := raftIndex(t, a); end < start+uint64(jobs) {
		t.Fatalf("raft index went from %d to %d during %d registrations", start, end, jobs)
	}
	for len(got) < jobs {
		f := nextFrame(t, lines)
		if f.Error != "" {
			t.Fatalf("the reading consumer was closed: %s", f.Error)
		}
		for _, e := range f.Events {
			got[e.FilterKeys[0]] = true // the eval's job
		}
	}
	// The stuck connection is cut: reading it now ends in EOF or a
	// reset once its buffered bytes are consumed.
	conn.SetReadDeadline(time.Now().Add(streamTimeout))
	buf := make([]byte, 64<<10)
	for {
		if _, err := conn.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the stuck consumer's connection was never closed")
			}
			break
		}
	}
}

// drainFrames returns the frames ready on lines now, without waiting.
func drainFrames(lines <-chan string) []wireFrame {
	var out []wireFrame
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return out
			}
			var f wireFrame
			if json.Unmarshal([]byte(line), &f) == nil {
				out = append(out, f)
			}
		default:
			return out
		}
	}
}

func raftIndex(t *testing.T, a *TestAgent) uint64 {
	t.Helper()
	i, err := a.server.(nomadServer).State().LatestIndex()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestEventStreamEndsWhenTheAgentShutsDown: an open stream does not hold
// the agent's shutdown, and its caller sees the end.
func TestEventStreamEndsWhenTheAgentShutsDown(t *testing.T) {
	a := serverAgent(t)
	_, lines := openStream(t, a.URL+"/v1/event/stream?topic=Node", "")
	waitUntil(t, "the stream to subscribe", func() bool { return eventBroker(t, a).Subscribers() == 1 })
	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(streamTimeout):
		t.Fatal("shutdown waited for the open stream")
	}
	for range lines {
	}
}

// TestEventStreamThroughAClientOnlyAgent: an agent without a server
// relays its server's stream: frames in order, heartbeats, the token
// checked by the server.
func TestEventStreamThroughAClientOnlyAgent(t *testing.T) {
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	cli := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.Client.Servers = []string{srv.RPCAddr()}
	})
	c := nomadClient(t, cli)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := c.EventStream().Stream(ctx, map[nomadapi.Topic][]string{nomadapi.TopicJob: {"relayed"}}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, srv, mockJob("relayed", 1))
	select {
	case evs := <-ch:
		if evs.Err != nil {
			t.Fatal(evs.Err)
		}
		if len(evs.Events) != 1 || evs.Events[0].Key != "relayed" || evs.Events[0].Type != structs.TypeJobRegistered {
			t.Fatalf("relayed frame %+v", evs)
		}
		j, err := evs.Events[0].Job()
		if err != nil || *j.ID != "relayed" {
			t.Fatalf("relayed job %v, %v", j, err)
		}
	case <-time.After(streamTimeout):
		t.Fatal("no relayed frame")
	}

	// Resuming through the relay starts at the index asked for.
	_, lines := openStream(t, cli.URL+"/v1/event/stream?topic=Job&index=1", "")
	f := nextFrame(t, lines)
	if f.Events[0].Key != "relayed" {
		t.Fatalf("first relayed frame from index 1: %+v", f)
	}
	resp, body := call(t, http.MethodGet, cli.URL+"/v1/event/stream?topic=Bogus", nil)
	requireStatus(t, resp, body, http.StatusBadRequest, "invalid topic")
}

func TestEventStreamRelayChecksTokens(t *testing.T) {
	srv, mgmt := aclDevAgent(t)
	cli := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.ACL.Enabled = true
		c.Client.Servers = []string{srv.RPCAddr()}
	})
	resp, lines := openStream(t, cli.URL+"/v1/event/stream?topic=Node", "")
	if resp.StatusCode != 403 || !strings.Contains(<-lines, "Permission denied") {
		t.Fatalf("anonymous relayed stream: %d", resp.StatusCode)
	}
	resp, _ = openStream(t, cli.URL+"/v1/event/stream?topic=Node", mgmt)
	if resp.StatusCode != 200 {
		t.Fatalf("management relayed stream: %d", resp.StatusCode)
	}
}

// TestEventStreamsCountAsBlockingQueries: one client's open streams are
// bounded by limits.max_blocking_queries_per_client, and a closed stream
// gives its slot back.
func TestEventStreamsCountAsBlockingQueries(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.Limits.MaxBlockingQueriesPerClient = 2
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := http.DefaultClient.Do(mustRequest(t, ctx, a.URL+"/v1/event/stream?topic=Node"))
	if err != nil || first.StatusCode != 200 {
		t.Fatalf("stream 1: %v %v", first, err)
	}
	if resp, _ := openStream(t, a.URL+"/v1/event/stream?topic=Node", ""); resp.StatusCode != 200 {
		t.Fatalf("stream 2: %d", resp.StatusCode)
	}
	resp, body := call(t, http.MethodGet, a.URL+"/v1/event/stream?topic=Node", nil)
	requireStatus(t, resp, body, http.StatusTooManyRequests, "limits.max_blocking_queries_per_client = 2")

	// Closing the first stream frees its slot.
	cancel()
	first.Body.Close()
	waitUntil(t, "the closed stream's slot to be free", func() bool { return eventBroker(t, a).Subscribers() == 1 })
	if resp, _ := openStream(t, a.URL+"/v1/event/stream?topic=Node", ""); resp.StatusCode != 200 {
		t.Fatalf("a stream after one closed: %d", resp.StatusCode)
	}
}

func mustRequest(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

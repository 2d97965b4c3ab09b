package agent

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/api"
)

// chunked sends body without a Content-Length, so only reading it can
// tell its size.
func chunked(t *testing.T, method, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func TestRequestBodiesAreBoundedWith413(t *testing.T) {
	a := NewTestAgent(t, func(c *Config) {
		c.Client.Enabled = false
		c.Limits.HTTPMaxBodySize = 2048
		c.Server.JobMaxSourceSize = 8 << 10
	})
	big := `{"SchedulerAlgorithm": "binpack", "Pad": "` + strings.Repeat("x", 4096) + `"}`
	url := a.URL + "/v1/operator/scheduler/configuration"

	resp, body := call(t, "PUT", url, big)
	requireStatus(t, resp, body, 413, "larger than 2048 bytes (2.0 KiB), the limit set by limits.http_max_body_size")
	resp, body = chunked(t, "PUT", url, big)
	requireStatus(t, resp, body, 413, "limits.http_max_body_size")

	// A job body may be larger than other bodies: twice the job size
	// limit plus an envelope, here 80 KiB.
	job := mockJob("fat", 1)
	job.Meta = map[string]string{"blob": strings.Repeat("x", 100<<10)}
	resp, body = call(t, "PUT", a.URL+"/v1/jobs", api.JobRegisterRequest{Job: job})
	requireStatus(t, resp, body, 413, "the limit set by server.job_max_source_size")
	resp, body = chunked(t, "PUT", a.URL+"/v1/jobs", string(mustJSON(t, api.JobRegisterRequest{Job: job})))
	requireStatus(t, resp, body, 413, "server.job_max_source_size")

	// Under the body limit but over the job size limit once encoded: the
	// server refuses it, still with a 413.
	job.Meta["blob"] = strings.Repeat("x", 20<<10)
	resp, body = call(t, "PUT", a.URL+"/v1/jobs", api.JobRegisterRequest{Job: job})
	requireStatus(t, resp, body, 413, "over the server's job_max_source_size of 8192 bytes")

	resp, body = call(t, "POST", a.URL+"/v1/jobs/parse", api.JobsParseRequest{JobHCL: "job \"x\" {\n" + strings.Repeat("# pad\n", 3000) + "}\n"})
	requireStatus(t, resp, body, 413, "JobHCL is 18012 bytes, over the 8192 bytes server.job_max_source_size allows")

	var list []any
	callOK(t, "GET", a.URL+"/v1/jobs", nil, &list)
	if len(list) != 0 {
		t.Fatalf("refused requests must change nothing, jobs: %v", list)
	}
}

// The finding: a 200 KB body nested 100,000 deep crashed /v1/jobs/parse
// with a stack overflow, taking the agent down.
func TestDeeplyNestedBodiesAreRefusedAndTheAgentLives(t *testing.T) {
	a := serverAgent(t)
	deep := strings.Repeat("[", 100_000) + "1" + strings.Repeat("]", 100_000)
	resp, body := call(t, "POST", a.URL+"/v1/jobs/parse", api.JobsParseRequest{JobHCL: "job \"x\" {\n  meta = { a = " + deep + " }\n}\n"})
	requireStatus(t, resp, body, 400, "input.hcl:2,")
	requireStatus(t, resp, body, 400, "Nesting too deep")

	resp, body = call(t, "PUT", a.URL+"/v1/jobs", `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Config": {"a": `+deep+`}}]}]}}`)
	requireStatus(t, resp, body, 400, "request body nests more than 100 levels deep")

	var leader string
	callOK(t, "GET", a.URL+"/v1/status/leader", nil, &leader)
}

func TestJobCountsOverTheLimitsAre400sNamingTheSetting(t *testing.T) {
	a := NewTestAgent(t, func(c *Config) {
		c.Client.Enabled = false
		c.Server.JobMaxCount = 10
		c.Server.JobMaxAllocs = 10
	})
	resp, body := call(t, "PUT", a.URL+"/v1/jobs", api.JobRegisterRequest{Job: mockJob("huge", 1_000_000_000)})
	requireStatus(t, resp, body, 400, `group "web" of job "huge" has count 1000000000, over the server's job_max_count of 10`)
}

// dialHTTP opens a raw connection and makes one keep-alive request on it,
// so the server has certainly accepted it.
func dialHTTP(t *testing.T, addr string) (net.Conn, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET /v1/status/leader HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, nil
}

func TestHTTPConnectionsPerClientAreBounded(t *testing.T) {
	a := NewTestAgent(t, func(c *Config) {
		c.Client.Enabled = false
		c.Limits.HTTPMaxConnsPerClient = 2
	})
	first, err := dialHTTP(t, a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	second, err := dialHTTP(t, a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := dialHTTP(t, a.Addr); err == nil {
		t.Fatal("a third connection from the same address must be closed at once")
	}
	first.Close()
	// The slot frees once the server has seen the close.
	a.waitFor(t, "a freed connection slot", func() bool { return a.connLimiter.open("127.0.0.1") < 2 })
	third, err := dialHTTP(t, a.Addr)
	if err != nil {
		t.Fatalf("after one closed, a new connection must be served: %v", err)
	}
	third.Close()
}

func TestConnLimiterLogsOncePerIntervalPerAddress(t *testing.T) {
	now := time.Unix(1000, 0)
	var logged []string
	l := newConnLimiter(func() int { return 1 }, nil)
	l.now = func() time.Time { return now }
	l.logger = recordingLogger(&logged)
	a1, a2 := fakeConn("10.0.0.1:1"), fakeConn("10.0.0.1:2")
	if !l.admit(a1) {
		t.Fatal("the first connection must be admitted")
	}
	for i := 0; i < 5; i++ {
		if l.admit(a2) {
			t.Fatal("a second connection must be refused")
		}
	}
	if len(logged) != 1 {
		t.Fatalf("refusals within a minute are logged once, got %d", len(logged))
	}
	now = now.Add(connLimitLogInterval)
	l.admit(a2)
	if len(logged) != 2 {
		t.Fatalf("a refusal a minute later is logged again, got %d", len(logged))
	}
	l.release(a1)
	if !l.admit(a2) {
		t.Fatal("a released slot must be reusable")
	}
}

// lineWriter collects what a logger writes, a line at a time.
type lineWriter struct{ lines *[]string }

func (w lineWriter) Write(p []byte) (int, error) {
	*w.lines = append(*w.lines, string(p))
	return len(p), nil
}

func recordingLogger(lines *[]string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: lineWriter{lines}, Level: hclog.Warn})
}

// addrConn is a net.Conn that only has a remote address.
type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c *addrConn) RemoteAddr() net.Addr { return c.remote }

func fakeConn(addr string) net.Conn {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		panic(err)
	}
	return &addrConn{remote: a}
}

package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
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
	a := NewTestAgent(t, func(c *config.Config) {
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
	a := NewTestAgent(t, func(c *config.Config) {
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
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.Limits.HTTPMaxConnsPerClient = 2
	})

	// Two idle keep-alive connections: a third takes the slot of one of
	// them, which the server closes.
	first, err := dialHTTP(t, a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := dialHTTP(t, a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	a.waitFor(t, "both connections idle", func() bool { return a.connLimiter.idle("127.0.0.1") == 2 })
	third, err := dialHTTP(t, a.Addr)
	if err != nil {
		t.Fatalf("a connection over the limit while others idle must be served: %v", err)
	}
	third.Close()
	if !closedByServer(first) && !closedByServer(second) {
		t.Fatal("an idle connection must have been closed to make room")
	}

	// Two busy connections (blocking queries in progress): a third is
	// answered 429, naming the setting.
	resp, _ := call(t, "GET", a.URL+"/v1/jobs", nil)
	url := fmt.Sprintf("%s/v1/jobs?index=%d&wait=1m", a.URL, index(t, resp)+1000)
	first.Close()
	second.Close()
	http.DefaultClient.CloseIdleConnections()
	a.waitFor(t, "the slots to free", func() bool { return a.connLimiter.open("127.0.0.1") == 0 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			if r, err := (&http.Client{Transport: tr}).Do(req); err == nil {
				r.Body.Close()
			}
		}()
	}
	a.waitFor(t, "two busy connections", func() bool {
		return a.connLimiter.open("127.0.0.1") == 2 && a.connLimiter.idle("127.0.0.1") == 0
	})
	c, err := net.Dial("tcp", a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	refused, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a connection over the limit while all are busy: %v", err)
	}
	body, _ := io.ReadAll(refused.Body)
	if refused.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "limits.http_max_conns_per_client") {
		t.Fatalf("got %d %q, want 429 naming limits.http_max_conns_per_client", refused.StatusCode, body)
	}
}

// closedByServer reports whether the server has closed c.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

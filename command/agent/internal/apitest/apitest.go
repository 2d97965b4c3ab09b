// Package apitest has the HTTP client side that the HTTP API's tests
// (command/agent/httpapi, over a fake agent) and the agent's own tests
// (command/agent, over a real one) share: requests with a JSON body,
// status and header checks, and the jobs they submit. It knows nothing of
// either package, only of HTTP and the api types; only tests import it.
package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
)

// Call sends a request with an optional JSON body (a string is sent as
// it is) and returns the response and its body.
func Call(t *testing.T, method, url string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// CallOK is Call that requires a 200 and decodes the answer into out.
func CallOK(t *testing.T, method, url string, body, out any) *http.Response {
	t.Helper()
	resp, raw := Call(t, method, url, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d: %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, url, raw, err)
		}
	}
	return resp
}

// RequireStatus checks a status code and that the body mentions want.
func RequireStatus(t *testing.T, resp *http.Response, body []byte, code int, want string) {
	t.Helper()
	if resp.StatusCode != code {
		t.Fatalf("want status %d, got %d: %s", code, resp.StatusCode, body)
	}
	if !strings.Contains(string(body), want) {
		t.Fatalf("body %q should mention %q", body, want)
	}
}

// Index is the response's X-Nomad-Index, failing the test without one.
func Index(t *testing.T, resp *http.Response) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	if err != nil {
		t.Fatalf("bad X-Nomad-Index %q", resp.Header.Get("X-Nomad-Index"))
	}
	return n
}

// OpenStream GETs url with token and returns the response and a channel
// of the body's lines, closed when the body ends. The stream is closed
// when the test ends.
func OpenStream(t *testing.T, url, token string) (*http.Response, <-chan string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return resp, lines
}

// MockJob is a service job for the mock driver.
func MockJob(id string, count int) *api.Job {
	return &api.Job{
		ID: &id, Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name: Ptr("web"), Count: &count,
			Tasks: []*api.Task{{Name: "app", Driver: "mock_driver", Config: map[string]any{"run_for": "1h"},
				Resources: &api.Resources{CPU: Ptr(100), MemoryMB: Ptr(64)}}},
		}},
	}
}

// Ptr is a pointer to a copy of v, for the api types' optional fields.
func Ptr[T any](v T) *T { return &v }

// RichNomadJob is a service job built with Nomad's api types using most of
// the blocks a real job file has: networks with dynamic and static ports,
// constraints, affinities, spreads, restart/reschedule/update/migrate/
// disconnect blocks, meta, env, services with checks, ephemeral disk and
// logs. Its one task runs on the mock driver and prints out.
func RichNomadJob(id, out string) *nomadapi.Job {
	job := nomadapi.NewServiceJob(id, id, "global", 55).AddDatacenter("dc1")
	job.Constrain(nomadapi.NewConstraint("${attr.kernel.name}", "is_set", ""))
	job.AddAffinity(nomadapi.NewAffinity("${node.datacenter}", "=", "dc1", 50))
	job.AddSpread(nomadapi.NewSpread("${node.datacenter}", 50, []*nomadapi.SpreadTarget{nomadapi.NewSpreadTarget("dc1", 100)}))
	job.SetMeta("owner", "compat")
	job.Update = &nomadapi.UpdateStrategy{
		Stagger:          Ptr(15 * time.Second),
		MaxParallel:      Ptr(1),
		HealthCheck:      Ptr("task_states"),
		MinHealthyTime:   Ptr(time.Second),
		HealthyDeadline:  Ptr(time.Minute),
		ProgressDeadline: Ptr(10 * time.Minute),
		AutoRevert:       Ptr(false),
		Canary:           Ptr(0),
	}

	task := nomadapi.NewTask("app", "mock_driver").
		SetConfig("run_for", "1h").
		SetConfig("stdout_string", out)
	task.Require(&nomadapi.Resources{CPU: Ptr(100), MemoryMB: Ptr(64)})
	task.Env = map[string]string{"GREETING": "hello"}
	task.SetMeta("task_meta", "t")
	task.SetLogConfig(&nomadapi.LogConfig{MaxFiles: Ptr(3), MaxFileSizeMB: Ptr(5)})
	task.KillTimeout = Ptr(3 * time.Second)
	task.Constrain(nomadapi.NewConstraint("${attr.kernel.name}", "is_set", ""))

	tg := nomadapi.NewTaskGroup("web", 1)
	tg.Constrain(nomadapi.NewConstraint("${node.datacenter}", "=", "dc1"))
	tg.AddAffinity(nomadapi.NewAffinity("${node.class}", "!=", "gpu", -20))
	tg.SetMeta("group_meta", "g")
	tg.Networks = []*nomadapi.NetworkResource{{
		Mode:          "host",
		DynamicPorts:  []nomadapi.Port{{Label: "http", To: 8080}},
		ReservedPorts: []nomadapi.Port{{Label: "admin", Value: 23456}},
	}}
	tg.RestartPolicy = &nomadapi.RestartPolicy{
		Attempts: Ptr(2), Interval: Ptr(30 * time.Minute), Delay: Ptr(15 * time.Second), Mode: Ptr("fail"),
	}
	tg.ReschedulePolicy = &nomadapi.ReschedulePolicy{
		Attempts: Ptr(0), Interval: Ptr(time.Duration(0)), Delay: Ptr(30 * time.Second),
		DelayFunction: Ptr("exponential"), MaxDelay: Ptr(time.Hour), Unlimited: Ptr(true),
	}
	tg.Migrate = &nomadapi.MigrateStrategy{
		MaxParallel: Ptr(1), HealthCheck: Ptr("checks"), MinHealthyTime: Ptr(10 * time.Second), HealthyDeadline: Ptr(5 * time.Minute),
	}
	tg.Disconnect = &nomadapi.DisconnectStrategy{LostAfter: Ptr(5 * time.Minute), Reconcile: Ptr("best_score")}
	tg.EphemeralDisk = &nomadapi.EphemeralDisk{SizeMB: Ptr(150), Sticky: Ptr(true)}
	tg.Services = []*nomadapi.Service{{
		Name:      "web",
		PortLabel: "http",
		Provider:  "nomad",
		Tags:      []string{"v1"},
		Checks: []nomadapi.ServiceCheck{{
			Name: "alive", Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second,
		}},
	}}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

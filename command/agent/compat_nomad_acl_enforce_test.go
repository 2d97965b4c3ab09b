package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
)

// helloScript prints a line and stays up.
const helloScript = `echo hello from the task; echo hi > "$NOMAD_TASK_DIR/note.txt"; while :; do sleep 1000 & wait; done`

func nomadShellJob(id string) *nomadapi.Job {
	job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
	task := nomadapi.NewTask("app", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", helloScript})
	task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	job.AddTaskGroup(nomadapi.NewTaskGroup("web", 1).AddTask(task))
	return job
}

// nomadStdout reads task app's stdout through Nomad's AllocFS().Logs.
func nomadStdout(c *nomadapi.Client, alloc *nomadapi.Allocation) (string, error) {
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errs := c.AllocFS().Logs(alloc, false, "app", "stdout", "start", 0, cancel, nil)
	var out strings.Builder
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return out.String(), nil
			}
			out.Write(f.Data)
		case err := <-errs:
			return out.String(), err
		case <-time.After(10 * time.Second):
			return out.String(), io.ErrNoProgress
		}
	}
}

// Nomad's own Go client, with SecretID set, runs, reads and stops a job
// and reads its logs and files on an agent with ACLs on; without a token
// every one of those calls is a 403 "Permission denied", and a token
// for another namespace fares no better.
func TestNomadClientWithAndWithoutATokenOnAnACLAgent(t *testing.T) {
	t.Parallel()
	a, mgmt := aclDevAgent(t)
	app := putPolicy(t, a, mgmt, "app", `namespace "default" { policy = "write" }`)
	other := putPolicy(t, a, mgmt, "other", `namespace "other" { policy = "write" }`)
	c := nomadClientWithToken(t, a, app)
	anon := nomadClient(t, a)
	stranger := nomadClientWithToken(t, a, other)

	_, _, err := anon.Jobs().Register(nomadShellJob("hello"), nil)
	requireAPIError(t, err, http.StatusForbidden, "Permission denied")
	_, _, err = stranger.Jobs().Register(nomadShellJob("hello"), nil)
	requireAPIError(t, err, http.StatusForbidden, "Permission denied")
	if _, _, err := c.Jobs().Register(nomadShellJob("hello"), nil); err != nil {
		t.Fatalf("register with a token: %v", err)
	}
	job, _, err := c.Jobs().Info("hello", nil)
	if err != nil || *job.ID != "hello" {
		t.Fatalf("read with a token: %v", err)
	}
	_, _, err = anon.Jobs().Info("hello", nil)
	requireAPIError(t, err, http.StatusForbidden, "Permission denied")
	if list, _, err := stranger.Jobs().List(&nomadapi.QueryOptions{Namespace: "*"}); err != nil || len(list) != 0 {
		t.Fatalf("another namespace's token lists every namespace: %d jobs, %v; want none", len(list), err)
	}

	alloc := nomadJobAllocs(t, c, "hello", 1, "the alloc to run", clientStatus("running"))[0]
	waitUntil(t, "the task's output", func() bool {
		out, err := nomadStdout(c, alloc)
		return err == nil && out == "hello from the task\n"
	})
	waitUntil(t, "the task's file", func() bool { return nomadCat(t, c, alloc, "app/local/note.txt") == "hi\n" })
	if _, err := nomadStdout(anon, alloc); nomadStatusCode(err) != http.StatusForbidden {
		t.Fatalf("logs without a token: %v", err)
	}
	if _, err := anon.AllocFS().Cat(alloc, "app/local/note.txt", nil); nomadStatusCode(err) != http.StatusForbidden {
		t.Fatalf("cat without a token: %v", err)
	}
	if _, _, err := stranger.AllocFS().List(alloc, "/", nil); nomadStatusCode(err) != http.StatusForbidden {
		t.Fatalf("ls with another namespace's token: %v", err)
	}
	if err := anon.Allocations().Signal(alloc, nil, "app", "SIGUSR1"); nomadStatusCode(err) != http.StatusForbidden {
		t.Fatalf("signal without a token: %v", err)
	}

	_, _, err = anon.Jobs().Deregister("hello", false, nil)
	requireAPIError(t, err, http.StatusForbidden, "Permission denied")
	if j, _, _ := c.Jobs().Info("hello", nil); j == nil || (j.Stop != nil && *j.Stop) {
		t.Fatal("a refused stop stopped the job")
	}
	if _, _, err := c.Jobs().Deregister("hello", false, nil); err != nil {
		t.Fatalf("stop with a token: %v", err)
	}
	if j, _, _ := c.Jobs().Info("hello", nil); j == nil || j.Stop == nil || !*j.Stop {
		t.Fatal("the stop did not stop the job")
	}
}

// What the agent answers itself checks the token there: agent, node,
// parse, validate, namespaces, search and the client's own endpoints.
func TestTheAgentsOwnEndpointsCheckTheirPolicies(t *testing.T) {
	t.Parallel()
	a, mgmt := aclDevAgent(t)
	agentReader := putPolicy(t, a, mgmt, "agent-read", `agent { policy = "read" }`)
	agentWriter := putPolicy(t, a, mgmt, "agent-write", `agent { policy = "write" }`)
	nodeReader := putPolicy(t, a, mgmt, "node-read", `node { policy = "read" }`)
	parser := putPolicy(t, a, mgmt, "parse", `namespace "default" { capabilities = ["parse-job"] }`)
	reader := putPolicy(t, a, mgmt, "reader", `namespace "default" { policy = "read" }`)
	logs := putPolicy(t, a, mgmt, "logs", `namespace "default" { capabilities = ["read-logs"] }`)
	lifecycle := putPolicy(t, a, mgmt, "lifecycle", `namespace "default" { capabilities = ["alloc-lifecycle"] }`)

	status := func(token, method, path string, body any) int {
		resp, _ := callAs(t, token, method, a.URL+path, body)
		return resp.StatusCode
	}
	cases := []struct {
		method, path string
		body         any
		allowed      []string
		refused      []string
	}{
		{"GET", "/v1/agent/self", nil, []string{agentReader, agentWriter, mgmt}, []string{nodeReader, reader}},
		{"GET", "/v1/agent/servers", nil, []string{agentReader}, []string{nodeReader}},
		{"GET", "/v1/agent/members", nil, []string{nodeReader}, []string{agentReader}},
		{"PUT", "/v1/agent/join?address=" + a.RPCAddr(), nil, []string{agentWriter}, []string{agentReader}},
		{"POST", "/v1/jobs/parse", map[string]string{"JobHCL": `job "x" {}`}, []string{parser, reader}, []string{logs, agentWriter}},
		{"PUT", "/v1/validate/job", map[string]any{"Job": mockJob("v", 1)}, []string{reader}, []string{parser}},
		{"GET", "/v1/namespace/default", nil, []string{reader, parser, logs}, []string{agentWriter}},
		{"GET", "/v1/client/stats", nil, []string{nodeReader}, []string{agentWriter, reader}},
	}
	for _, tc := range cases {
		for _, tok := range tc.allowed {
			if code := status(tok, tc.method, tc.path, tc.body); code != 200 {
				t.Errorf("%s %s with a token that may: %d", tc.method, tc.path, code)
			}
		}
		for _, tok := range tc.refused {
			if code := status(tok, tc.method, tc.path, tc.body); code != 403 {
				t.Errorf("%s %s with a token that may not: %d", tc.method, tc.path, code)
			}
		}
	}

	var nss []map[string]any
	resp, body := callAs(t, agentWriter, "GET", a.URL+"/v1/namespaces", nil)
	if resp.StatusCode != 200 || decodeInto(body, &nss) != nil || len(nss) != 0 {
		t.Fatalf("namespaces for a token with none: %d %s", resp.StatusCode, body)
	}
	resp, body = callAs(t, reader, "GET", a.URL+"/v1/namespaces", nil)
	if resp.StatusCode != 200 || decodeInto(body, &nss) != nil || len(nss) != 1 {
		t.Fatalf("namespaces for a reader: %d %s", resp.StatusCode, body)
	}

	// Search answers the contexts the token may read, and nothing else.
	registerJobAs(t, a, mgmt, shellJob("found", "sleep 1000"))
	var sr struct{ Matches map[string][]string }
	resp, body = callAs(t, reader, "PUT", a.URL+"/v1/search", map[string]string{"Prefix": "", "Context": "all"})
	if resp.StatusCode != 200 || decodeInto(body, &sr) != nil || len(sr.Matches["jobs"]) != 1 || len(sr.Matches["nodes"]) != 0 {
		t.Fatalf("search as a reader: %d %s", resp.StatusCode, body)
	}
	resp, body = callAs(t, nodeReader, "PUT", a.URL+"/v1/search", map[string]string{"Prefix": "", "Context": "jobs"})
	if resp.StatusCode != 403 {
		t.Fatalf("a jobs search by a token that reads no jobs: %d %s", resp.StatusCode, body)
	}

	// The client's endpoints, on the agent that runs the alloc.
	alloc := waitRunningAs(t, a, mgmt, "found")
	base := a.URL + "/v1/client"
	for _, tc := range []struct {
		method, url string
		body        any
		allowed     []string
		refused     []string
	}{
		{"GET", base + "/fs/logs/" + alloc + "?task=app&type=stdout&plain=true", nil, []string{logs, mgmt}, []string{reader, lifecycle, ""}},
		{"GET", base + "/fs/ls/" + alloc + "?path=/", nil, []string{mgmt}, []string{logs, reader, ""}},
		{"GET", base + "/allocation/" + alloc + "/stats", nil, []string{reader}, []string{logs, ""}},
		{"PUT", base + "/allocation/" + alloc + "/signal", map[string]string{"Signal": "SIGCONT"}, []string{lifecycle}, []string{reader, logs, ""}},
		// A prefix is located by the servers, which check the same.
		{"GET", base + "/fs/logs/" + alloc[:8] + "?task=app&type=stdout&plain=true", nil, []string{logs}, []string{reader, ""}},
	} {
		for _, tok := range tc.allowed {
			if code := status(tok, tc.method, strings.TrimPrefix(tc.url, a.URL), tc.body); code != 200 {
				t.Errorf("%s %s with a token that may: %d", tc.method, tc.url, code)
			}
		}
		for _, tok := range tc.refused {
			if code := status(tok, tc.method, strings.TrimPrefix(tc.url, a.URL), tc.body); code != 403 {
				t.Errorf("%s %s with a token that may not: %d", tc.method, tc.url, code)
			}
		}
	}
}

// A client-only agent checks the tokens of its own endpoints by asking
// its servers (ACL.ResolveToken) and remembering the answer for
// acl.token_ttl: a token that may read the alloc's files reads them, on
// the client agent directly or forwarded by the server agent; no token is
// refused; and once no server answers, a token the client does not
// remember is refused rather than guessed at.
func TestAClientOnlyAgentResolvesTokensThroughItsServers(t *testing.T) {
	t.Parallel()
	srv := aclAgent(t)
	mgmt := bootstrapToken(t, srv)
	files := putPolicy(t, srv, mgmt, "files", `namespace "default" { capabilities = ["read-logs", "read-fs"] }`)
	unused := putPolicy(t, srv, mgmt, "unused", `namespace "default" { capabilities = ["read-logs", "read-fs"] }`)
	cl := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.ACL.Enabled = true
		c.Client.Servers = []string{srv.RPCAddr()}
	})
	registerJobAs(t, srv, mgmt, shellJob("remote", helloScript))
	alloc := waitRunningAs(t, srv, mgmt, "remote")
	cat := func(a *TestAgent, token string) (int, string) {
		resp, body := callAs(t, token, "GET", a.URL+"/v1/client/fs/cat/"+alloc+"?path=app/local/note.txt", nil)
		return resp.StatusCode, string(body)
	}
	waitUntil(t, "the task's file", func() bool { code, body := cat(cl, files); return code == 200 && body == "hi\n" })
	if code, body := cat(cl, ""); code != 403 || !strings.HasPrefix(body, "Permission denied") {
		t.Fatalf("no token on the client agent: %d %s", code, body)
	}
	if code, body := cat(cl, "made-up-token"); code != 403 || !strings.Contains(body, "ACL token not found") {
		t.Fatalf("an unknown token on the client agent: %d %s", code, body)
	}
	if code, body := cat(srv, files); code != 200 || body != "hi\n" {
		t.Fatalf("through the server agent, forwarded to the client's: %d %s", code, body)
	}
	if code, _ := cat(srv, ""); code != 403 {
		t.Fatalf("no token through the server agent: %d", code)
	}

	if err := srv.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if code, body := cat(cl, files); code != 200 || body != "hi\n" {
		t.Fatalf("a token the client remembers, with the servers gone: %d %s", code, body)
	}
	code, body := cat(cl, unused)
	if code == 200 || !strings.Contains(body, "could not be checked") {
		t.Fatalf("a token the client never resolved, with the servers gone: %d %s; want a refusal", code, body)
	}
}

package agent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/jobspec"
)

// nomadLogs reads a task's whole log of one type (stdout or stderr) through
// Nomad's AllocFS().Logs, without following.
func nomadLogs(t *testing.T, c *nomadapi.Client, alloc *nomadapi.Allocation, task, typ string) string {
	t.Helper()
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errs := c.AllocFS().Logs(alloc, false, task, typ, "start", 0, cancel, nil)
	var out strings.Builder
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return out.String()
			}
			out.Write(f.Data)
		case err := <-errs:
			t.Fatalf("logs of %s/%s: %v", alloc.ID, task, err)
		}
	}
}

// nomadJobAllocs waits until the job has n allocations that all satisfy ok,
// and returns them in full.
func nomadJobAllocs(t *testing.T, c *nomadapi.Client, jobID string, n int, what string, ok func(*nomadapi.AllocationListStub) bool) []*nomadapi.Allocation {
	t.Helper()
	var stubs []*nomadapi.AllocationListStub
	waitUntil(t, what, func() bool {
		var err error
		stubs, _, err = c.Jobs().Allocations(jobID, true, nil)
		if err != nil {
			t.Fatalf("allocations of %s: %v", jobID, err)
		}
		if len(stubs) != n {
			return false
		}
		for _, s := range stubs {
			if !ok(s) {
				return false
			}
		}
		return true
	})
	var out []*nomadapi.Allocation
	for _, s := range stubs {
		alloc, _, err := c.Allocations().Info(s.ID, nil)
		if err != nil {
			t.Fatalf("alloc info %s: %v", s.ID, err)
		}
		out = append(out, alloc)
	}
	return out
}

func clientStatus(status string) func(*nomadapi.AllocationListStub) bool {
	return func(s *nomadapi.AllocationListStub) bool { return s.ClientStatus == status }
}

// TestNomadJobFiles runs real Nomad job files (testdata/nomad-jobs) through
// Drover: each parses with Drover's jobspec and through /v1/jobs/parse with
// Nomad's client to the same job, validates, registers with Nomad's client,
// plans back to "no change", and runs as its type says.
func TestNomadJobFiles(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	files, err := filepath.Glob("testdata/nomad-jobs/*.nomad.hcl")
	if err != nil || len(files) < 6 {
		t.Fatalf("job files: %v %v", files, err)
	}
	registered := map[string]*nomadapi.Job{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Drover's own parser, the job converted to Nomad's type by JSON.
		dj, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: path, Body: src})
		if err != nil {
			t.Fatalf("%s: jobspec: %v", path, err)
		}
		raw, err := json.Marshal(dj)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON nomadapi.Job
		if err := json.Unmarshal(raw, &viaJSON); err != nil {
			t.Fatalf("%s: Drover's parsed job does not decode as Nomad's api.Job: %v", path, err)
		}
		// The same file through the server's parser and Nomad's client.
		nj, err := c.Jobs().ParseHCL(string(src), false)
		if err != nil {
			t.Fatalf("%s: ParseHCL: %v", path, err)
		}
		if a, b := mustJSON(t, &viaJSON), mustJSON(t, nj); !bytes.Equal(a, b) {
			t.Fatalf("%s: jobspec and /v1/jobs/parse disagree:\n%s\n%s", path, a, b)
		}
		canon, err := c.Jobs().ParseHCL(string(src), true)
		if err != nil || canon.Region == nil || canon.Namespace == nil || canon.TaskGroups[0].Count == nil || canon.TaskGroups[0].RestartPolicy == nil {
			t.Fatalf("%s: ParseHCL canonicalized: %v %+v", path, err, canon)
		}

		val, _, err := c.Jobs().Validate(nj, nil)
		if err != nil || len(val.ValidationErrors) != 0 || val.Error != "" || !val.DriverConfigValidated {
			t.Fatalf("%s: validate: %v %+v", path, err, val)
		}
		reg, _, err := c.Jobs().Register(nj, nil)
		if err != nil {
			t.Fatalf("%s: register: %v", path, err)
		}
		if (nj.IsPeriodic() || nj.IsParameterized()) != (reg.EvalID == "") {
			t.Fatalf("%s: register eval %q", path, reg.EvalID)
		}
		// Registering the same file again changes nothing.
		plan, _, err := c.Jobs().Plan(&viaJSON, true, nil)
		if err != nil || plan.Diff == nil || plan.Diff.Type != "None" {
			t.Fatalf("%s: plan of the unchanged job: %v %+v", path, err, plan)
		}
		registered[*nj.ID] = nj
	}
	if len(registered) != len(files) {
		t.Fatalf("job IDs are not distinct: %v", registered)
	}
	stubs, _, err := c.Jobs().List(nil)
	if err != nil || len(stubs) != len(files) {
		t.Fatalf("list: %v %+v", err, stubs)
	}

	t.Run("parse with variables and errors", func(t *testing.T) {
		src, err := os.ReadFile("testdata/nomad-jobs/web.nomad.hcl")
		if err != nil {
			t.Fatal(err)
		}
		job, err := c.Jobs().ParseHCLOpts(&nomadapi.JobsParseRequest{
			JobHCL: string(src), Variables: "greeting = \"hi\"\ndatacenters = [\"dc2\"]\n", Canonicalize: true,
		})
		if err != nil || job.TaskGroups[0].Tasks[0].Env["GREETING"] != "hi" || len(job.Datacenters) != 1 || job.Datacenters[0] != "dc2" {
			t.Fatalf("parse with variables: %v %+v", err, job)
		}
		_, err = c.Jobs().ParseHCL("job \"broken\" {\n  group \"g\" {\n", false)
		if err == nil || !strings.Contains(err.Error(), "400") {
			t.Fatalf("parse of broken HCL: %v", err)
		}
		_, err = c.Jobs().ParseHCL("job \"x\" {\n  type = \"service\"\n  bogus_key = 1\n}\n", false)
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "bogus_key") {
			t.Fatalf("parse of an unknown key: %v", err)
		}
	})

	t.Run("web", func(t *testing.T) {
		job, _, err := c.Jobs().Info("web", nil)
		if err != nil {
			t.Fatal(err)
		}
		tg := job.TaskGroups[0]
		task := tg.Tasks[0]
		if job.Meta["team"] != "frontend" || len(tg.Services) != 1 || tg.Services[0].Name != "web" ||
			len(tg.Services[0].Checks) != 1 || tg.Services[0].Checks[0].Path != "/health" ||
			len(task.Templates) != 1 || *task.Templates[0].DestPath != "local/app.conf" ||
			task.Env["GREETING"] != "hello from web" || task.Env["PORT"] != "${NOMAD_PORT_http}" ||
			*task.LogConfig.MaxFiles != 3 || len(tg.Networks) != 1 || tg.Networks[0].DynamicPorts[0].To != 8080 {
			t.Fatalf("web job: %+v", job)
		}
		allocs := nomadJobAllocs(t, c, "web", 1, "web to run", clientStatus("running"))
		alloc := allocs[0]
		ports := alloc.AllocatedResources.Shared.Ports
		if len(ports) != 1 || ports[0].Label != "http" || ports[0].To != 8080 || ports[0].Value == 0 {
			t.Fatalf("web ports: %+v", ports)
		}
		waitUntil(t, "web's greeting in its stdout", func() bool {
			return nomadLogs(t, c, alloc, "server", "stdout") == "hello from web\n"
		})
		// The job file's template was rendered before the task started.
		want := "listen = \"" + ports[0].HostIP + ":" + strconv.Itoa(ports[0].Value) + "\"\n"
		if got := nomadCat(t, c, alloc, "server/local/app.conf"); got != want {
			t.Fatalf("web's rendered template %q, want %q", got, want)
		}
	})

	t.Run("lifecycle", func(t *testing.T) {
		allocs := nomadJobAllocs(t, c, "with-init", 1, "with-init to run", clientStatus("running"))
		alloc := allocs[0]
		waitUntil(t, "main to print what init wrote", func() bool {
			return nomadLogs(t, c, alloc, "main", "stdout") == "ready\n"
		})
		alloc, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		init, side, cleanup := alloc.TaskStates["init"], alloc.TaskStates["sidecar"], alloc.TaskStates["cleanup"]
		if init.State != "dead" || init.Failed || init.Restarts != 0 || side.State != "running" || cleanup.State != "pending" {
			t.Fatalf("task states: init %+v, sidecar %+v, cleanup %+v", init, side, cleanup)
		}
		if _, _, err := c.Jobs().Deregister("with-init", false, nil); err != nil {
			t.Fatal(err)
		}
		nomadJobAllocs(t, c, "with-init", 1, "with-init to stop", clientStatus("complete"))
		waitUntil(t, "the poststop task's output", func() bool {
			return nomadLogs(t, c, alloc, "cleanup", "stdout") == "cleaned up\n"
		})
	})

	t.Run("docker job is not placed where no docker daemon answers", func(t *testing.T) {
		evals, _, err := c.Jobs().Evaluations("example", nil)
		if err != nil || len(evals) == 0 {
			t.Fatalf("evals: %v %+v", err, evals)
		}
		var failed *nomadapi.Evaluation
		waitUntil(t, "the register eval to report the unplaceable group", func() bool {
			evals, _, err = c.Jobs().Evaluations("example", nil)
			for _, e := range evals {
				if e.Status == "complete" && e.FailedTGAllocs["cache"] != nil {
					failed = e
					return true
				}
			}
			return false
		})
		if failed.BlockedEval == "" {
			t.Fatalf("no blocked eval: %+v", failed)
		}
		blocked, _, err := c.Evaluations().Info(failed.BlockedEval, nil)
		if err != nil || blocked.Status != "blocked" {
			t.Fatalf("blocked eval: %v %+v", err, blocked)
		}
		sum, _, err := c.Jobs().Summary("example", nil)
		if err != nil || sum.Summary["cache"].Queued != 1 {
			t.Fatalf("summary: %v %+v", err, sum)
		}
		allocs, _, err := c.Jobs().Allocations("example", true, nil)
		if err != nil || len(allocs) != 0 {
			t.Fatalf("allocs: %v %+v", err, allocs)
		}
	})

	t.Run("parameterized", func(t *testing.T) {
		job, _, err := c.Jobs().Info("video-encode", nil)
		if err != nil || !job.IsParameterized() || job.ParameterizedJob.Payload != "optional" ||
			len(job.ParameterizedJob.MetaRequired) != 1 || job.ParameterizedJob.MetaRequired[0] != "input" ||
			job.TaskGroups[0].Tasks[0].DispatchPayload == nil || job.TaskGroups[0].Tasks[0].DispatchPayload.File != "input.json" {
			t.Fatalf("parameterized job: %v %s", err, mustJSON(t, job))
		}
		allocs, _, err := c.Jobs().Allocations("video-encode", true, nil)
		if err != nil || len(allocs) != 0 {
			t.Fatalf("allocs: %v %+v", err, allocs)
		}
		stubs, _, err := c.Jobs().PrefixList("video")
		if err != nil || len(stubs) != 1 || !stubs[0].ParameterizedJob || stubs[0].Status != "running" {
			t.Fatalf("parameterized stub: %v %+v", err, stubs)
		}
	})

	t.Run("periodic", func(t *testing.T) {
		job, _, err := c.Jobs().Info("cleanup", nil)
		if err != nil || !job.IsPeriodic() || len(job.Periodic.Specs) != 1 || job.Periodic.Specs[0] != "0 3 * * *" ||
			!*job.Periodic.ProhibitOverlap || *job.Periodic.TimeZone != "UTC" {
			t.Fatalf("periodic job: %v %+v", err, job)
		}
		evalID, _, err := c.Jobs().PeriodicForce("cleanup", nil)
		if err != nil || evalID == "" {
			t.Fatalf("periodic force: %v %q", err, evalID)
		}
		ev, _, err := c.Evaluations().Info(evalID, nil)
		if err != nil || !strings.HasPrefix(ev.JobID, "cleanup/periodic-") {
			t.Fatalf("forced eval: %v %+v", err, ev)
		}
		allocs := nomadJobAllocs(t, c, ev.JobID, 1, "the forced child to finish", clientStatus("complete"))
		if out := nomadLogs(t, c, allocs[0], "cleanup", "stdout"); out != "cleaning up\n" {
			t.Fatalf("child output %q", out)
		}
		child, _, err := c.Jobs().Info(ev.JobID, nil)
		if err != nil || *child.ParentID != "cleanup" || child.IsPeriodic() {
			t.Fatalf("child job: %v %+v", err, child)
		}
		waitUntil(t, "the parent's summary to count the finished child", func() bool {
			sum, _, err := c.Jobs().Summary("cleanup", nil)
			if err != nil {
				t.Fatal(err)
			}
			return sum.Children != nil && sum.Children.Dead == 1 && sum.Children.Running == 0 && sum.Children.Pending == 0
		})
		stubs, _, err := c.Jobs().List(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stubs {
			if s.ID == "cleanup" && (!s.Periodic || s.JobSummary == nil || s.JobSummary.Children == nil) {
				t.Fatalf("periodic parent's stub: %+v", s)
			}
			if s.ID == ev.JobID && s.ParentID != "cleanup" {
				t.Fatalf("child's stub: %+v", s)
			}
		}
	})

	t.Run("sysbatch", func(t *testing.T) {
		allocs := nomadJobAllocs(t, c, "prune", 1, "prune to finish on the node", clientStatus("complete"))
		if allocs[0].NodeID != a.NodeID() {
			t.Fatalf("prune ran on %s", allocs[0].NodeID)
		}
		if out := nomadLogs(t, c, allocs[0], "prune", "stdout"); out != "pruned on "+a.config.Name+"\n" {
			t.Fatalf("prune output %q", out)
		}
	})

	t.Run("system", func(t *testing.T) {
		allocs := nomadJobAllocs(t, c, "node-agent", 1, "node-agent to run on the node", clientStatus("running"))
		ports := allocs[0].AllocatedResources.Shared.Ports
		if allocs[0].NodeID != a.NodeID() || len(ports) != 1 || ports[0].Label != "metrics" || ports[0].Value == 0 {
			t.Fatalf("node-agent alloc: node %s ports %+v", allocs[0].NodeID, ports)
		}
		want := "agent listening on " + strconv.Itoa(ports[0].Value) + "\n"
		waitUntil(t, "node-agent's output", func() bool {
			return nomadLogs(t, c, allocs[0], "agent", "stdout") == want
		})
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

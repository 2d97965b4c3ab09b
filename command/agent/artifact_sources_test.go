package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/structs"
)

// artifactJob is a batch job whose one task fetches source (into local/)
// and, if that worked, cats what it fetched.
func artifactJob(id, source string) *api.Job {
	job := shellJob(id, "ls -l local; cat local/*")
	job.Type = ptr("batch")
	tg := job.TaskGroups[0]
	tg.RestartPolicy = &api.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	tg.Tasks[0].Artifacts = []*api.TaskArtifact{{GetterSource: &source}}
	return job
}

// failedArtifact waits for jobID's one alloc to fail and returns its
// alloc ID and the task's Failed Artifact Download event.
func failedArtifact(t *testing.T, a *TestAgent, jobID string) (string, *structs.TaskEvent) {
	t.Helper()
	var allocs []*structs.AllocListStub
	waitUntil(t, jobID+" failed", func() bool {
		callOK(t, "GET", a.URL+"/v1/job/"+jobID+"/allocations", nil, &allocs)
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusFailed
	})
	st, _ := taskState(t, a, allocs[0].ID, "app")
	for _, e := range st.Events {
		if e.Type == structs.TaskArtifactDownloadFailed {
			if hasEvent(st, structs.TaskStarted) {
				t.Fatalf("the task started: %+v", st.Events)
			}
			return allocs[0].ID, e
		}
	}
	t.Fatalf("no %q event: %+v", structs.TaskArtifactDownloadFailed, st.Events)
	return "", nil
}

// TestAJobCannotFetchTheHostsFilesOrTheAgentsOwnAPI is the attack as it
// was found: an artifact of file:///etc/shadow, read back through the fs
// API, and an artifact pointing at the agent's own HTTP port. Both fail
// the task with an event naming the setting that would allow them, and
// nothing lands in the task's directory.
func TestAJobCannotFetchTheHostsFilesOrTheAgentsOwnAPI(t *testing.T) {
	t.Parallel()
	// Loopback is allowed (as a test web server would need), which must
	// still not open the agent's own port.
	a := NewTestAgent(t, allowLoopbackArtifacts)

	registerJob(t, a, artifactJob("shadow", "file:///etc/shadow"))
	alloc, e := failedArtifact(t, a, "shadow")
	for _, want := range []string{"/etc/shadow", "outside the allocation directory", artifact.SettingAllowedLocalPaths, artifact.SettingDisableIsolation} {
		if !strings.Contains(e.DisplayMessage, want) || !strings.Contains(e.DownloadError(), want) {
			t.Fatalf("event %q does not say %q", e.DisplayMessage, want)
		}
	}
	var local []api.AllocFileInfo
	callOK(t, "GET", a.URL+"/v1/client/fs/ls/"+alloc+"?path=/app/local", nil, &local)
	if len(local) != 0 {
		t.Fatalf("app/local holds %+v", local)
	}
	resp, body := call(t, "GET", a.URL+"/v1/client/fs/cat/"+alloc+"?path=app/local/shadow", nil)
	requireStatus(t, resp, body, 404, "no such file")

	registerJob(t, a, artifactJob("self", "http://"+a.Addr+"/v1/agent/self"))
	_, e = failedArtifact(t, a, "self")
	for _, want := range []string{a.Addr, "own API or RPC listener", artifact.SettingAllowedHosts} {
		if !strings.Contains(e.DisplayMessage, want) {
			t.Fatalf("event %q does not say %q", e.DisplayMessage, want)
		}
	}
}

// TestAllowedLocalPathsLetAJobFetchAHostFile: the setting the refusal
// names works, and the copy is no more readable than the original.
func TestAllowedLocalPathsLetAJobFetchAHostFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(p, []byte("mode=host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Artifact.AllowedLocalPaths = []string{dir} })
	job := artifactJob("hostfile", p)
	registerJob(t, a, job)
	var allocs []*structs.AllocListStub
	waitUntil(t, "hostfile complete", func() bool {
		callOK(t, "GET", a.URL+"/v1/job/hostfile/allocations", nil, &allocs)
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusComplete
	})
	var st api.AllocFileInfo
	callOK(t, "GET", a.URL+"/v1/client/fs/stat/"+allocs[0].ID+"?path=app/local/app.conf", nil, &st)
	if st.FileMode != "-rw-------" {
		t.Fatalf("copied as %s, want -rw-------", st.FileMode)
	}
	if got := catAlloc(t, a, allocs[0].ID, "app/local/app.conf"); got != "mode=host\n" {
		t.Fatalf("app/local/app.conf = %q", got)
	}
}

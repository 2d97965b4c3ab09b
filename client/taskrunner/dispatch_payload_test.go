package taskrunner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// dispatchedHarness runs task as part of a dispatched child carrying
// payload.
func dispatchedHarness(t *testing.T, task *structs.Task, payload []byte) *harness {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	t.Cleanup(drv.Shutdown)
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	job := h.cfg.Alloc.Job
	job.ID, job.ParentID, job.Dispatched, job.Payload = "job/dispatch-1700000000-0a1b2c3d", "job", true, payload
	return h
}

func TestDispatchPayloadIsInTheLocalDirWhenTheTaskStarts(t *testing.T) {
	// Bytes a text round trip would damage: NUL, CR LF, no final newline.
	payload := []byte("{\"rows\": 3}\x00\r\n\xff end")
	// The task copies the file as it finds it at start, byte for byte, and
	// fails if it is not there.
	task := rawTask("work", `cat local/in/input.json`)
	task.DispatchPayload = &structs.DispatchPayloadConfig{File: "in/input.json"}
	h := dispatchedHarness(t, task, payload)
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	stdout, err := os.ReadFile(filepath.Join(h.dir.LogDir, "work.stdout.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout, payload) {
		t.Fatalf("the task read %q from local/in/input.json, want %q", stdout, payload)
	}
	onDisk, _ := os.ReadFile(filepath.Join(h.dir.Task("work").LocalDir, "in", "input.json"))
	if !bytes.Equal(onDisk, payload) {
		t.Fatalf("payload file holds %q", onDisk)
	}
}

func TestDispatchPayloadFileIsEmptyWithoutAPayload(t *testing.T) {
	task := rawTask("work", `test -f local/input.json && test ! -s local/input.json`)
	task.DispatchPayload = &structs.DispatchPayloadConfig{File: "input.json"}
	h := dispatchedHarness(t, task, nil)
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("the task did not find an empty local/input.json: %+v", s.Events)
	}
}

func TestDispatchPayloadIsNotWrittenThroughASymlinkOutOfTheTaskDir(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "work", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		DispatchPayload: &structs.DispatchPayloadConfig{File: "input.json"}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.cfg.Alloc.Job.Payload = []byte("overwrite")
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What a task could leave behind for its next start.
	if err := os.Symlink(outside, filepath.Join(h.dir.Task("work").LocalDir, "input.json")); err != nil {
		t.Fatal(err)
	}
	h.run(t)
	testutil.WaitForWhile(t, "task to fail", h.dead, func() { clk.Advance(time.Second) })
	if got, _ := os.ReadFile(outside); string(got) != "keep" {
		t.Fatalf("a file outside the task dir was overwritten: %q", got)
	}
	s := h.tr.TaskState()
	if !s.Failed || drv.Starts() != 0 {
		t.Fatalf("the task must fail without starting: failed=%v starts=%d", s.Failed, drv.Starts())
	}
	var hook *structs.TaskEvent
	for _, e := range s.Events {
		if e.Type == structs.TaskHookFailed {
			hook = e
		}
	}
	if hook == nil || !strings.Contains(hook.DisplayMessage, "dispatch_payload: writing local/input.json") {
		t.Fatalf("events %v lack a %q event naming the payload file", eventTypes(s), structs.TaskHookFailed)
	}
}

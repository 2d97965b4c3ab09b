package taskrunner

import (
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

// TestTemplatesAreRenderedBeforeTheTaskStarts: a raw_exec task reads the
// file a template rendered, sees an env template's variables in its
// environment, and gets them interpolated into its arguments.
func TestTemplatesAreRenderedBeforeTheTaskStarts(t *testing.T) {
	clk := clock.NewFake(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	task := rawTask("web", `cat local/app.conf; echo "mode=$APP_MODE port=$APP_PORT where=$WHERE arg=$1"`)
	task.Config["args"] = []any{"-c", task.Config["args"].([]any)[1], "sh", "${APP_MODE}"}
	task.Env["WHERE"] = "from the env block"
	task.Meta = map[string]string{"tier": "front"}
	task.Templates = []*structs.Template{
		{DestPath: "local/app.conf", Perms: "0600",
			EmbeddedTmpl: "listen = \"{{ env \"NOMAD_ADDR_http\" }}\"\nalloc = {{ env \"NOMAD_ALLOC_ID\" }}\ntier = {{ env \"NOMAD_META_tier\" | toUpper }}\nat = {{ timestamp }}\n"},
		{DestPath: "${NOMAD_SECRETS_DIR}/app.env", Envvars: true,
			EmbeddedTmpl: "APP_MODE=prod\nAPP_PORT={{ env \"NOMAD_PORT_http\" }}\nWHERE=\"from the template\"\n"},
	}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	stdout, err := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stdout.0"))
	if err != nil {
		t.Fatal(err)
	}
	want := "listen = \"127.0.0.1:23456\"\nalloc = " + h.cfg.Alloc.ID + "\ntier = FRONT\nat = 2024-05-06T07:08:09Z\n" +
		"mode=prod port=23456 where=from the template arg=prod\n"
	if string(stdout) != want {
		t.Fatalf("stdout\n%q\nwant\n%q", stdout, want)
	}
	fi, err := os.Stat(filepath.Join(h.dir.Task("web").Dir, "local/app.conf"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rendered file %v %v", fi, err)
	}
}

// TestTemplatesAreRenderedAgainOnRestart: every start renders afresh.
func TestTemplatesAreRenderedAgainOnRestart(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "10s", "exit_code": 1},
		RestartPolicy: &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail},
		Templates:     []*structs.Template{{EmbeddedTmpl: "x", DestPath: "local/x.conf"}}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	rendered := filepath.Join(h.dir.Task("t").Dir, "local/x.conf")
	h.run(t)
	testutil.WaitFor(t, "task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
	if err := os.Remove(rendered); err != nil {
		t.Fatalf("the first start rendered nothing: %v", err)
	}
	testutil.WaitForWhile(t, "the restarted task to run", func() bool {
		s := h.tr.TaskState()
		return s.Restarts == 1 && s.State == structs.TaskStateRunning
	}, func() { clk.Advance(time.Second) })
	if _, err := os.Stat(rendered); err != nil {
		t.Fatalf("the restart did not render the template again: %v", err)
	}
}

// TestAFailingTemplateFailsTheStartUnderTheRestartPolicy: a template that
// cannot render never reaches the driver; each attempt is reported as a
// Task hook failed event naming the template, and the restart policy
// counts it as a failed start until the task fails.
func TestAFailingTemplateFailsTheStartUnderTheRestartPolicy(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 2, Interval: 10 * time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail},
		Templates: []*structs.Template{
			{EmbeddedTmpl: "ok", DestPath: "local/ok.conf"},
			{EmbeddedTmpl: `db = {{ key "app/db" }}`, DestPath: "local/app.conf"},
		}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitForWhile(t, "task to fail", h.dead, func() { clk.Advance(time.Second) })
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 2 || drv.Starts() != 0 {
		t.Fatalf("failed=%v restarts=%d starts=%d", s.Failed, s.Restarts, drv.Starts())
	}
	want := []string{structs.TaskReceived, structs.TaskSetup,
		structs.TaskHookFailed, structs.TaskRestarting, structs.TaskHookFailed, structs.TaskRestarting,
		structs.TaskHookFailed, structs.TaskNotRestarting}
	if got := eventTypes(s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", got, want)
	}
	hook := s.Events[2]
	for _, part := range []string{"Template failed: ", `template[1] (destination "local/app.conf")`, "key (app.conf:1:8) reads from Consul", "Drover has no Consul, Vault or Nomad"} {
		if !strings.Contains(hook.DisplayMessage, part) {
			t.Fatalf("display message %q lacks %q", hook.DisplayMessage, part)
		}
	}
	if !strings.HasPrefix(hook.Message, "template: ") || hook.Details["destination"] != "local/app.conf" || hook.Details["template_index"] != "1" {
		t.Fatalf("event %+v", hook)
	}
	if r := s.Events[3]; r.RestartReason() != "Error was recoverable" {
		t.Fatalf("restart reason %q", r.RestartReason())
	}
	if last := s.Events[len(s.Events)-1]; !last.FailsTask || !strings.Contains(last.RestartReason(), "Exceeded allowed attempts 2") {
		t.Fatalf("last event %+v", last)
	}
}

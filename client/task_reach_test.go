package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// The finding: the agent's cloud and Consul credentials, and a password
// an init script exported, reached tasks and `{{ env "..." }}` in their
// templates. With Nomad's default env.denylist and the operator's own
// on top, a raw_exec task (which inherits the agent's environment) and
// its templates see none of them.
func TestTheAgentsCredentialsReachNoTaskNorTemplate(t *testing.T) {
	secrets := map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SESSION_TOKEN": "aws-session", "GOOGLE_APPLICATION_CREDENTIALS": "/etc/gcp.json",
		"CONSUL_TOKEN": "consul", "DATABASE_PASSWORD": "hunter2",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("HARMLESS", "kept")
	e := newEnv(t, time.Minute)
	c := e.start(func(cfg *config.Config) { cfg.Options["env.denylist"] = "DATABASE_PASSWORD" })
	task := shTask(`env > "$NOMAD_TASK_DIR/env"`)
	var tmpl strings.Builder
	for k := range secrets {
		tmpl.WriteString(k + `=[{{ env "` + k + `" }}]` + "\n")
	}
	tmpl.WriteString(`HARMLESS=[{{ env "HARMLESS" }}]` + "\n")
	task.Templates = []*structs.Template{{DestPath: "local/rendered", EmbeddedTmpl: tmpl.String()}}
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, task)))
	e.waitFor("the task to end", func() bool {
		s := e.serverStatus(a.ID)
		return s == structs.AllocClientStatusComplete || s == structs.AllocClientStatusFailed
	})
	if ts := e.fs.Alloc(a.ID).TaskStates["web"]; ts.Failed {
		t.Fatalf("task failed: %+v", ts.Events)
	}

	local := filepath.Join(c.cfg.AllocDir(), a.ID, "web", "local")
	env, err := os.ReadFile(filepath.Join(local, "env"))
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := os.ReadFile(filepath.Join(local, "rendered"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range secrets {
		if strings.Contains(string(env), v) {
			t.Errorf("%s reached the task's environment", k)
		}
		if !strings.Contains(string(rendered), k+"=[]\n") {
			t.Errorf("%s reached a template: %q", k, rendered)
		}
	}
	if !strings.Contains(string(env), "HARMLESS=kept\n") || !strings.Contains(string(rendered), "HARMLESS=[kept]\n") {
		t.Errorf("a variable on no denylist must still reach a raw_exec task and its templates")
	}
}

// The client checks user.denylist at every start too: a task placed by a
// scheduler that did not know (or before the node's options changed)
// fails at once, with an event naming the user and the setting.
func TestTheClientRefusesADeniedUserAtStart(t *testing.T) {
	e := newEnv(t, time.Minute)
	c := e.start(func(cfg *config.Config) { cfg.Options["user.checked_drivers"] = "raw_exec" })
	task := shTask(`touch "$NOMAD_TASK_DIR/ran"`)
	task.User = "root"
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, task)))
	e.waitServerStatus(a.ID, structs.AllocClientStatusFailed)
	ts := e.fs.Alloc(a.ID).TaskStates["web"]
	var msg string
	for _, ev := range ts.Events {
		if ev.Type == structs.TaskHookFailed {
			msg = ev.DisplayMessage
		}
	}
	if !strings.Contains(msg, `user "root"`) || !strings.Contains(msg, "user.denylist") || !strings.Contains(msg, "raw_exec") {
		t.Fatalf("event %q must name the user, the setting and the driver (events %+v)", msg, ts.Events)
	}
	if _, err := os.Stat(filepath.Join(c.cfg.AllocDir(), a.ID, "web", "local", "ran")); err == nil {
		t.Fatal("the denied task ran")
	}
}

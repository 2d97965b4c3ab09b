package agent

import (
	"strconv"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
)

// templateJob is a raw_exec service job whose task "app" has the given
// templates and prints what it was given: its stdout shows the rendered
// config and the env template's variable.
func templateJob(id string, tmpls ...*nomadapi.Template) *nomadapi.Job {
	job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
	job.SetMeta("team", "web-team")
	task := nomadapi.NewTask("app", "raw_exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `cat local/app.conf; echo "mode=$APP_MODE arg=$1"; exec sleep 3600`, "sh", "${APP_MODE}"})
	task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.Templates = tmpls
	tg := nomadapi.NewTaskGroup("web", 1).AddTask(task)
	tg.Networks = []*nomadapi.NetworkResource{{DynamicPorts: []nomadapi.Port{{Label: "http"}}}}
	tg.RestartPolicy = &nomadapi.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	tg.ReschedulePolicy = &nomadapi.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	job.AddTaskGroup(tg)
	return job
}

// TestNomadClientTemplatesAreRendered registers, with Nomad's client, a job
// whose task has a config template and an env template, and reads the
// rendered file back through the alloc fs endpoint (AllocFS().Cat): the
// template saw the alloc's ID, port and meta; the task saw the env
// template's variable in its environment and its arguments.
func TestNomadClientTemplatesAreRendered(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	job := templateJob("rendered",
		&nomadapi.Template{
			DestPath: ptr("local/app.conf"),
			EmbeddedTmpl: ptr(`listen = "{{ env "NOMAD_ADDR_http" }}"
alloc = {{ env "NOMAD_ALLOC_ID" }}
team = {{ env "NOMAD_META_team" | toUpper }}
ports = {{ range $i := loop 3 }}{{ 8080 | add $i }} {{ end }}
`),
			Perms: ptr("0640"),
		},
		&nomadapi.Template{
			DestPath:     ptr("${NOMAD_SECRETS_DIR}/app.env"),
			EmbeddedTmpl: ptr(`APP_MODE=[[ "PROD" | toLower ]]`),
			LeftDelim:    ptr("[["), RightDelim: ptr("]]"),
			Envvars: ptr(true),
		})
	reg, _, err := c.Jobs().Register(job, nil)
	if err != nil || reg.Warnings != "" {
		t.Fatalf("register: %v (warnings %q)", err, reg.Warnings)
	}
	alloc := nomadJobAllocs(t, c, "rendered", 1, "the alloc to run", clientStatus("running"))[0]
	ports := alloc.AllocatedResources.Shared.Ports
	if len(ports) != 1 {
		t.Fatalf("ports %+v", ports)
	}
	addr := ports[0].HostIP + ":" + strconv.Itoa(ports[0].Value)
	want := "listen = \"" + addr + "\"\nalloc = " + alloc.ID + "\nteam = WEB-TEAM\nports = 8080 8081 8082 \n"
	if got := nomadCat(t, c, alloc, "app/local/app.conf"); got != want {
		t.Fatalf("rendered file\n%q\nwant\n%q", got, want)
	}
	fi, _, err := c.AllocFS().Stat(alloc, "app/local/app.conf", nil)
	if err != nil || fi.FileMode != "-rw-r-----" {
		t.Fatalf("stat: %v %+v", err, fi)
	}
	waitUntil(t, "the task's output", func() bool {
		return nomadLogs(t, c, alloc, "app", "stdout") == want+"mode=prod arg=prod\n"
	})
}

// TestNomadClientTemplateFailureIsATaskEvent: a template that reads from
// Consul fails the task's start; Nomad's client reads the event that says
// so, and the alloc fails under its restart policy.
func TestNomadClientTemplateFailureIsATaskEvent(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	job := templateJob("needs-consul", &nomadapi.Template{
		DestPath:     ptr("local/app.conf"),
		EmbeddedTmpl: ptr(`db = {{ key "app/db" }}`),
	})
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	alloc := nomadJobAllocs(t, c, "needs-consul", 1, "the alloc to fail", clientStatus("failed"))[0]
	ts := alloc.TaskStates["app"]
	if ts == nil || !ts.Failed || ts.StartedAt.Unix() > 0 {
		t.Fatalf("task state %+v", ts)
	}
	var hook *nomadapi.TaskEvent
	for _, e := range ts.Events {
		if e.Type == "Task hook failed" {
			hook = e
		}
	}
	if hook == nil {
		t.Fatalf("no Task hook failed event in %+v", ts.Events)
	}
	for _, part := range []string{"Template failed: ", `destination "local/app.conf"`, "key (app.conf:1:8) reads from Consul", "Drover has no Consul, Vault or Nomad"} {
		if !strings.Contains(hook.DisplayMessage, part) {
			t.Fatalf("event message %q lacks %q", hook.DisplayMessage, part)
		}
	}
	if got := nomadCat(t, c, alloc, "app/local/app.conf"); got != "" {
		t.Fatalf("a refused template was rendered: %q", got)
	}
}

// TestNomadClientTemplateValidation: what can be checked without
// rendering is refused at register time, naming group, task and template.
func TestNomadClientTemplateValidation(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := nomadClient(t, a)
	cases := []struct {
		name string
		tmpl *nomadapi.Template
		want string
	}{
		{"no destination", &nomadapi.Template{EmbeddedTmpl: ptr("x")}, "destination is missing"},
		{"neither data nor source", &nomadapi.Template{DestPath: ptr("local/x")}, "needs data"},
		{"perms not octal", &nomadapi.Template{EmbeddedTmpl: ptr("x"), DestPath: ptr("local/x"), Perms: ptr("644x")}, `perms "644x" is not an octal file mode`},
		{"an unknown change mode", &nomadapi.Template{EmbeddedTmpl: ptr("x"), DestPath: ptr("local/x"), ChangeMode: ptr("reload")}, `change_mode "reload" must be noop, restart, signal or script`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := templateJob("invalid", tc.tmpl)
			_, _, err := c.Jobs().Register(job, nil)
			want := `group "web" task "app" template[0]: ` + tc.want
			if nomadStatusCode(err) != 400 || !strings.Contains(err.Error(), want) {
				t.Fatalf("register: %v, want a 400 containing %q", err, want)
			}
		})
	}
	if _, _, err := c.Jobs().Info("invalid", nil); err == nil {
		t.Fatal("a refused job was stored")
	}
}

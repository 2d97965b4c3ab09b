package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/jobspec"
)

// refusedJobs are jobs each of which breaks one of the rules that keep a
// tenant's job within what it asked for, with the message a user must see.
var refusedJobs = []struct {
	name, hcl, want string
}{
	{"a task named alloc", `
    task "alloc" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }`, `group "g" task "alloc": task name "alloc" is reserved`},
	{"a setuid template", `
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      template {
        data        = "#!/bin/sh"
        destination = "local/x"
        perms       = "4755"
      }
    }`, `group "g" task "t" template[0]: perms "4755" of "local/x" sets the setuid bit; templates may not make setuid, setgid or sticky files; use "0755"`},
	{"logs larger than the disk", `
    ephemeral_disk { size = 50 }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      logs {
        max_files     = 5
        max_file_size = 10
      }
    }`, `group "g" task "t": log storage (50 MB) must be less than requested disk capacity (50 MB)`},
	{"a misspelt driver config key", `
    task "web" {
      driver = "exec"
      config { comand = "/bin/sleep" }
    }`, `group "g" task "web": driver "exec": unknown config key "comand"; did you mean "command"?`},
	{"a misspelt docker image key", `
    task "web" {
      driver = "docker"
      config { imgae = "x" }
    }`, `group "g" task "web": driver "docker": unknown config key "imgae"; did you mean "image"?`},
	{"args that are not a list", `
    task "web" {
      driver = "raw_exec"
      config {
        command = "/bin/echo"
        args    = "x"
      }
    }`, `group "g" task "web": driver "raw_exec": config key "args" must be a list of strings, got a string ("x")`},
}

func jobHCL(group string) string {
	return "job \"bad\" {\n  datacenters = [\"dc1\"]\n  group \"g\" {" + group + "\n  }\n}\n"
}

// TestRefusedJobsAreRefusedAlikeEverywhere: job validate, job plan and
// registration refuse each job with the same message, whether the job
// came from a job file (the CLI parses HCL and sends JSON) or from
// Nomad's own Go client, and a refused job leaves no job and no
// evaluation behind.
func TestRefusedJobsAreRefusedAlikeEverywhere(t *testing.T) {
	a := serverAgent(t)
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range refusedJobs {
		t.Run(c.name, func(t *testing.T) {
			job, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: "bad.hcl", Body: []byte(jobHCL(c.hcl))})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}

			var val api.JobValidateResponse
			callOK(t, http.MethodPut, a.URL+"/v1/validate/job", api.JobValidateRequest{Job: job}, &val)
			if !strings.Contains(val.Error, c.want) || len(val.ValidationErrors) == 0 {
				t.Errorf("validate: got %+v, want an error containing %q", val, c.want)
			}

			resp, body := call(t, http.MethodPut, a.URL+"/v1/job/bad/plan", api.JobPlanRequest{Job: job, Diff: true})
			requireStatus(t, resp, body, http.StatusBadRequest, c.want)

			resp, body = call(t, http.MethodPut, a.URL+"/v1/jobs", api.JobRegisterRequest{Job: job})
			requireStatus(t, resp, body, http.StatusBadRequest, c.want)

			// Nomad's client, from the same JSON: its job type has every
			// field Drover's has that these jobs use.
			raw, _ := json.Marshal(job)
			var nj nomadapi.Job
			if err := json.Unmarshal(raw, &nj); err != nil {
				t.Fatal(err)
			}
			if _, _, err := nc.Jobs().Register(&nj, nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Nomad client register: got %v, want an error containing %q", err, c.want)
			}
		})
	}
	requireNothingStored(t, a)
}

// TestDriverConfigRefusedFromARawJSONBody: a body written by hand (JSON
// numbers, lists and objects) is judged like a job file.
func TestDriverConfigRefusedFromARawJSONBody(t *testing.T) {
	a := serverAgent(t)
	task := func(driver, config string) string {
		return fmt.Sprintf(`{"Job": {"ID": "bad", "Datacenters": ["dc1"], "TaskGroups": [{"Name": "g", "Tasks": [
			{"Name": "t", "Driver": %q, "Config": %s, "Resources": {"CPU": 100, "MemoryMB": 64}}]}]}}`, driver, config)
	}
	cases := []struct{ name, body, want string }{
		{"a misspelt key", task("exec", `{"comand": "/bin/sleep"}`), `driver "exec": unknown config key "comand"; did you mean "command"?`},
		{"args as a number", task("raw_exec", `{"command": "/bin/sleep", "args": 1}`), `config key "args" must be a list of strings, got a number (1)`},
		{"a mock exit code as a list", task("mock_driver", `{"exit_code": [1]}`), `driver "mock_driver": config key "exit_code" must be a number, got a list`},
		{"a missing command", task("raw_exec", `{"args": ["1"]}`), `driver "raw_exec": config key "command" is missing (e.g. command = "/bin/sleep")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := call(t, http.MethodPut, a.URL+"/v1/jobs", c.body)
			requireStatus(t, resp, body, http.StatusBadRequest, c.want)
			resp, body = call(t, http.MethodPut, a.URL+"/v1/job/bad/plan", c.body)
			requireStatus(t, resp, body, http.StatusBadRequest, c.want)
		})
	}
	requireNothingStored(t, a)

	// The same shapes, right, are registered.
	good := task("raw_exec", `{"command": "/bin/sleep", "args": ["1", 2], "oom_score_adj": 0}`)
	resp, body := call(t, http.MethodPut, a.URL+"/v1/jobs", good)
	requireStatus(t, resp, body, http.StatusOK, "EvalID")
}

// TestNomadClientJobsWithKnownConfigStillRegister: a job built with
// Nomad's Go client (which sends null for every field it leaves unset)
// passes the driver config check with the keys Nomad documents.
func TestNomadClientJobsWithKnownConfigStillRegister(t *testing.T) {
	a := serverAgent(t)
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	job := nomadapi.NewServiceJob("ok", "ok", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := nomadapi.NewTask("t", "exec").
		SetConfig("command", "/bin/sleep").
		SetConfig("args", []string{"60"}).
		SetConfig("pid_mode", "private").
		SetConfig("cap_drop", []string{"all"})
	task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	job.AddTaskGroup(nomadapi.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := nc.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
}

// requireNothingStored fails unless the agent holds no job and no
// evaluation.
func requireNothingStored(t *testing.T, a *TestAgent) {
	t.Helper()
	var jobs, evals []any
	callOK(t, http.MethodGet, a.URL+"/v1/jobs", nil, &jobs)
	callOK(t, http.MethodGet, a.URL+"/v1/evaluations", nil, &evals)
	if len(jobs) != 0 || len(evals) != 0 {
		t.Fatalf("a refused job must change nothing, got jobs %v and evaluations %v", jobs, evals)
	}
}

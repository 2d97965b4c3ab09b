//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// checkedJob runs one raw_exec task that becomes ready (a file in its
// directory) three seconds after it starts, with a group service whose
// checks probe the client agent's own HTTP API (http and tcp) and the
// task's readiness (a script run in the task). Its migrate block judges
// health by the checks.
func checkedJob(id string, m taskMarker, agentPort int) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  group "g" {
    migrate {
      health_check     = "checks"
      min_healthy_time = "2s"
      healthy_deadline = "2m"
    }
    service {
      name = "agent"
      port = "%d"
      check {
        name     = "agent-http"
        type     = "http"
        path     = "/v1/agent/health"
        interval = "1s"
        timeout  = "2s"
      }
      check {
        name     = "agent-tcp"
        type     = "tcp"
        interval = "1s"
        timeout  = "2s"
      }
      check {
        name     = "ready"
        type     = "script"
        task     = "t"
        command  = "/bin/sh"
        args     = ["-c", "test -f ready"]
        interval = "1s"
        timeout  = "2s"
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/bash"
        args    = ["-c", "sleep 3; touch ready; exec -a %s-$NOMAD_ALLOC_ID sleep 3600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`, id, agentPort, m)
}

// A service alloc outside any deployment runs its http, tcp and script
// checks on its client, shows them through Nomad's Go client and `alloc
// status`, and reports itself healthy (for the drainer) only once every
// check passes and min_healthy_time has passed.
func TestServiceChecksJudgeMigrationHealth(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s, client := c.server, c.clients["c1"]
	registerJob(t, s, checkedJob("checked", m, client.httpPort), 10*time.Second)
	alloc, _ := waitForFirstAlloc(t, s, "checked", m)

	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: s.httpAddr()})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		checks, err := nc.Allocations().Checks(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		var desc []string
		passing := 0
		for _, ch := range checks {
			desc = append(desc, ch.Check+"="+ch.Status)
			if ch.Status == "success" && ch.Service == "agent" && ch.Group == "g" && ch.Mode == "healthiness" {
				passing++
			}
			if ch.Check == "agent-http" && ch.Status == "success" && ch.StatusCode != 200 {
				return false, fmt.Sprintf("agent-http passed with %d", ch.StatusCode)
			}
		}
		return len(checks) == 3 && passing == 3, fmt.Sprintf("checks %v", desc)
	})

	var healthy *nomadapi.Allocation
	waitFor(t, 30*time.Second, func() (bool, string) {
		a, _, err := nc.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		healthy = a
		ds := a.DeploymentStatus
		return ds != nil && ds.Healthy != nil, fmt.Sprintf("deployment status %+v", ds)
	})
	ds := healthy.DeploymentStatus
	started := healthy.TaskStates["t"].StartedAt
	// The process starts a moment before the client records StartedAt,
	// so allow half a second: without waiting for the script the verdict
	// would come after min_healthy_time alone (2s).
	if !*ds.Healthy || ds.Timestamp.Sub(started) < 4500*time.Millisecond {
		t.Fatalf("verdict %+v for a task started at %v: want healthy no sooner than ready (3s) + min_healthy_time (2s)", ds, started)
	}
	t.Logf("healthy %s after the task started", ds.Timestamp.Sub(started))

	out, code := s.cli("alloc", "status", alloc.ID)
	if code != 0 || !strings.Contains(out, "Service Checks") {
		t.Fatalf("alloc status (exit %d):\n%s", code, out)
	}
	for _, name := range []string{"agent-http", "agent-tcp", "ready"} {
		if !lineWith(out, name, "success") {
			t.Fatalf("alloc status does not show %s passing:\n%s", name, out)
		}
	}
}

// lineWith reports whether one line of out contains every word.
func lineWith(out string, words ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			return true
		}
	}
	return false
}

// A script check that keeps failing restarts its task through
// check_restart, counted by the task's restart policy.
func TestCheckRestartRestartsTheTask(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s := c.server
	job := fmt.Sprintf(`
job "restarted" {
  datacenters = ["dc1"]
  group "g" {
    restart {
      attempts = 5
      interval = "10m"
      delay    = "1s"
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/bash"
        args    = ["-c", "exec -a %s-$NOMAD_ALLOC_ID sleep 3600"]
      }
      service {
        name = "broken"
        check {
          name     = "never"
          type     = "script"
          command  = "/bin/sh"
          args     = ["-c", "echo not today; exit 2"]
          interval = "1s"
          timeout  = "2s"
          check_restart {
            limit = 2
            grace = "1s"
          }
        }
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`, m)
	registerJob(t, s, job, 10*time.Second)
	alloc, _ := waitForFirstAlloc(t, s, "restarted", m)
	waitFor(t, 30*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		ts := a.TaskStates["t"]
		if ts == nil {
			return false, "no task state"
		}
		for _, e := range ts.Events {
			if e.Type == "Restart Signaled" && e.RestartReason == `healthcheck: check "never" unhealthy` && ts.Restarts >= 1 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("task %s, %d restarts", ts.State, ts.Restarts)
	})
	checks, err := s.api().Allocations().Checks(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if ch.Check != "never" || ch.Task != "t" || (ch.Status == "failure" && ch.Output != "not today\n" && ch.StatusCode == 2) {
			t.Fatalf("check %+v", ch)
		}
	}
}

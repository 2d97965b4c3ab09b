//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/drivers/docker"
)

// dockerTrapJob is a docker job whose task prints, then prints a line on
// each SIGUSR2 and exits 3 on SIGUSR1, never restarted.
func dockerTrapJob(name, image string) string {
	return fmt.Sprintf(`
job %q {
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "trap 'echo got-usr1; exit 3' USR1; trap 'echo got-usr2' USR2; echo started; while true; do sleep 0.2; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, name, image)
}

// The client's docker plugin points at a daemon of the test's own, which
// the test stops and starts while a task runs: the node's docker driver
// turns unhealthy (and a new docker job is not placed there), then
// healthy again (and that job is placed); the running task keeps its
// container, the client follows it again, its output after the restart
// reaches `alloc logs`, and its exit afterwards is the task's. Then the
// client agent is killed, the container writes a line, and the restarted
// client's logs hold it, and every earlier line once.
func TestDockerDaemonRestartKeepsTheTask(t *testing.T) {
	own := startOwnDockerd(t)
	s := startServer(t, "server")
	c := newAgent(t, agentSpec{name: "own-docker-client", extra: fmt.Sprintf(`
client {
  enabled           = true
  servers           = [%q]
  cpu_total_compute = 4000
  memory_total_mb   = 4096
}
plugin "docker" {
  config {
    endpoint = %q
  }
}
`, s.rpcAddr(), own.endpoint())})
	waitForReadyNodes(t, s, "own-docker-client")
	image := "drover-test/busybox:1"

	registerJob(t, s, dockerTrapJob("trap", image), 30*time.Second)
	var alloc *api.Allocation
	waitFor(t, 90*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "trap")
		if err != nil || len(allocs) != 1 {
			return false, fmt.Sprintf("allocs: %s (%v)", describeAllocs(allocs), err)
		}
		alloc = allocs[0]
		return alloc.ClientStatus == "running", describeAllocs(allocs)
	})
	waitForAllocLogs(t, s, alloc.ID, "t", "started")
	before := ownContainers(t, own, alloc.ID)
	if len(before) != 1 || before[0].State != "running" {
		t.Fatalf("containers of the alloc: %+v, want one running", before)
	}
	waitForDockerHealth(t, s, alloc.NodeID, true)

	own.stop()
	waitForDockerHealth(t, s, alloc.NodeID, false)

	registerJob(t, s, dockerTrapJob("later", image), 30*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		evals, _, err := s.api().Jobs().Evaluations("later", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if e.Status == "blocked" || len(e.FailedTGAllocs) > 0 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d evals, none blocked", len(evals))
	})
	if allocs, err := jobAllocs(s, "later"); err != nil || len(allocs) != 0 {
		t.Fatalf("a docker job was placed on a node whose docker is down: %s (%v)", describeAllocs(allocs), err)
	}

	own.start()
	waitForDockerHealth(t, s, alloc.NodeID, true)
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "later")
		return err == nil && len(allocs) == 1 && allocs[0].ClientStatus == "running", fmt.Sprintf("later: %s (%v)", describeAllocs(allocs), err)
	})

	now := ownContainers(t, own, alloc.ID)
	if len(now) != 1 || now[0].ID != before[0].ID || now[0].State != "running" {
		t.Fatalf("after the daemon restart the alloc's containers are %+v, want %s running", now, before[0].ID)
	}
	a, _, err := s.api().Allocations().Info(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts := a.TaskStates["t"]; a.ClientStatus != "running" || ts == nil || ts.State != "running" || ts.Restarts != 0 {
		t.Fatalf("after the daemon restart: alloc %s, task %+v", a.ClientStatus, ts)
	}

	signal(t, own, before[0].ID, "USR2")
	waitForAllocLogs(t, s, alloc.ID, "t", "got-usr2")

	// Output while the client is away: written by the container, copied
	// by the next client from the cursor the killed one left.
	c.kill()
	signal(t, own, before[0].ID, "USR2")
	waitFor(t, 30*time.Second, func() (bool, string) {
		n := strings.Count(ownLogs(t, own, before[0].ID), "got-usr2")
		return n == 2, fmt.Sprintf("%d got-usr2 lines in the daemon's logs", n)
	})
	c.start()
	waitFor(t, 60*time.Second, func() (bool, string) {
		logs, code := s.cli("alloc", "logs", alloc.ID, "t")
		return code == 0 && strings.Count(logs, "got-usr2") == 2, fmt.Sprintf("alloc logs (exit %d): %q", code, logs)
	})

	signal(t, own, before[0].ID, "USR1")
	waitFor(t, 60*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		ts := a.TaskStates["t"]
		if ts == nil || ts.State != "dead" {
			return false, fmt.Sprintf("task %+v", ts)
		}
		for _, ev := range ts.Events {
			if ev.Type == "Terminated" && ev.ExitCode == 3 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("dead without an exit 3: %+v", ts.Events)
	})
	logs := waitForAllocLogs(t, s, alloc.ID, "t", "got-usr1")
	if want := "started\ngot-usr2\ngot-usr2\ngot-usr1\n"; logs != want {
		t.Fatalf("alloc logs = %q, want %q: each line once", logs, want)
	}
	for _, job := range []string{"trap", "later"} {
		if _, _, err := s.api().Jobs().Deregister(job, true, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// signal sends sig to the container through the Engine.
func signal(t *testing.T, d *ownDockerd, id, sig string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.cli.ContainerKill(ctx, id, sig); err != nil {
		t.Fatal(err)
	}
}

// ownLogs is the container's output as the daemon has it.
func ownLogs(t *testing.T, d *ownDockerd, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// waitForAllocLogs waits until the task's stdout holds want and returns it.
func waitForAllocLogs(t *testing.T, s *agent, allocID, task, want string) string {
	t.Helper()
	var logs string
	waitFor(t, 30*time.Second, func() (bool, string) {
		var code int
		logs, code = s.cli("alloc", "logs", allocID, task)
		return code == 0 && strings.Contains(logs, want), fmt.Sprintf("alloc logs (exit %d), want %q: %s", code, want, logs)
	})
	return logs
}

// waitForDockerHealth waits until the server sees the node's docker
// driver healthy (or not).
func waitForDockerHealth(t *testing.T, s *agent, nodeID string, healthy bool) {
	t.Helper()
	waitFor(t, 60*time.Second, func() (bool, string) {
		n, _, err := s.api().Nodes().Info(nodeID, nil)
		if err != nil {
			return false, err.Error()
		}
		d := n.Drivers["docker"]
		if d == nil {
			return false, "no docker driver on the node"
		}
		return d.Healthy == healthy, fmt.Sprintf("driver.docker healthy=%v (%s), want %v", d.Healthy, d.HealthDescription, healthy)
	})
}

// ownContainers lists the containers Drover labelled with the alloc on
// the test's own daemon.
func ownContainers(t *testing.T, d *ownDockerd, allocID string) []container.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelAllocID+"="+allocID))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

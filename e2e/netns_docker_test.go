//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// dockerDisconnectJob is a count-1 docker service job that keeps the
// original alloc when its client comes back.
func dockerDisconnectJob(image string) string {
	return fmt.Sprintf(`
job "dockeraway" {
  group "g" {
    count = 1
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }
    task "t" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "echo up; while true; do sleep 1; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, image)
}

// The disconnect tests' keep_original case with docker tasks, the client
// partitioned away by a real cut of its network namespace's link: while
// it is away its container keeps running and a replacement container
// runs on the other client; after the heal the original alloc (its same
// container) is the one running, and the Engine holds no container of
// the replacement any more.
func TestNetnsDockerReconnectKeepsTheOriginalContainer(t *testing.T) {
	cli := dockerimage.Client(t)
	image := dockerimage.Ensure(t)
	elapsed(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 1, clients: []string{"away"}})
	s := c.servers[0]

	registerJob(t, s, dockerDisconnectJob(image), 10*time.Second)
	var orig *api.Allocation
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "dockeraway")
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false, fmt.Sprintf("allocs: %s (%v)", describeAllocs(allocs), err)
		}
		orig = allocs[0]
		return true, ""
	})
	t.Cleanup(func() { removeContainersOf(t, cli, orig.ID) })
	origCt := containersOf(t, cli, orig.ID)
	if len(origCt) != 1 || origCt[0].State != "running" {
		t.Fatalf("containers of the original: %+v, want one running", origCt)
	}
	c.startClient("spare")
	waitForReadyNodes(t, s, "away", "spare")

	away := c.nodes["away"]
	away.cut()
	var repl *api.Allocation
	waitFor(t, 60*time.Second, func() (bool, string) {
		if st := nodeStatus(s, "away"); st != "disconnected" {
			return false, "away is " + st
		}
		allocs, err := jobAllocs(s, "dockeraway")
		if err != nil {
			return false, err.Error()
		}
		repl = nil
		for _, a := range allocs {
			switch {
			case a.ID == orig.ID && a.ClientStatus != "unknown":
				return false, "the original is " + a.ClientStatus
			case a.ID != orig.ID && a.NodeName == "spare" && a.ClientStatus == "running":
				repl = a
			}
		}
		return repl != nil, "no replacement running on spare: " + describeAllocs(allocs)
	})
	t.Cleanup(func() { removeContainersOf(t, cli, repl.ID) })
	if rc := containersOf(t, cli, repl.ID); len(rc) != 1 || rc[0].State != "running" {
		t.Fatalf("containers of the replacement: %+v, want one running", rc)
	}
	if now := containersOf(t, cli, orig.ID); len(now) != 1 || now[0].ID != origCt[0].ID || now[0].State != "running" {
		t.Fatalf("while its client is away the original's containers are %+v, want %s running", now, origCt[0].ID)
	}

	away.heal()
	waitFor(t, 60*time.Second, func() (bool, string) {
		if st := nodeStatus(s, "away"); st != "ready" {
			return false, "healed node is " + st
		}
		allocs, err := jobAllocs(s, "dockeraway")
		if err != nil {
			return false, err.Error()
		}
		running := runningAllocs(allocs)
		if len(running) != 1 || running[0].ID != orig.ID {
			return false, "want only the original running: " + describeAllocs(allocs)
		}
		if rc := containersOf(t, cli, repl.ID); len(rc) != 0 {
			return false, fmt.Sprintf("the replacement's containers are still there: %+v", rc)
		}
		return true, ""
	})
	waitForEvalsDone(t, s, "dockeraway")
	a, _, err := s.api().Allocations().Info(orig.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertUnknownThenRunning(t, a)
	if ts := a.TaskStates["t"]; ts == nil || ts.State != "running" || ts.Restarts != 0 {
		t.Fatalf("the original's task after the heal: %+v", ts)
	}
	if now := containersOf(t, cli, orig.ID); len(now) != 1 || now[0].ID != origCt[0].ID || now[0].State != "running" {
		t.Fatalf("after the heal the original's containers are %+v, want %s running", now, origCt[0].ID)
	}
	if _, _, err := s.api().Jobs().Deregister("dockeraway", true, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() (bool, string) {
		now := containersOf(t, cli, orig.ID)
		return len(now) == 0, fmt.Sprintf("containers after the stop: %+v", now)
	})
}

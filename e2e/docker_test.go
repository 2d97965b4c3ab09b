//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// dockerClientConfig is a client agent with the docker driver, volumes
// enabled so that a job may bind a host directory.
func dockerClientConfig(server *agent) string {
	return fmt.Sprintf(`
client {
  enabled           = true
  servers           = [%q]
  cpu_total_compute = 4000
  memory_total_mb   = 4096
}
plugin "docker" {
  config {
    volumes {
      enabled = true
    }
  }
}
`, server.rpcAddr())
}

// dockerWebJob is a Nomad-style docker job: a dynamic port mapped to 8080
// in the container, a template rendered into /local, an env var and a bind
// volume. The task prints what it sees, then serves /local over HTTP.
func dockerWebJob(image, hostDir string) string {
	script := strings.Join([]string{
		`echo "greeting=$GREETING"`,
		`echo "task_dir=$NOMAD_TASK_DIR"`,
		`echo "volume=$(cat /data/from-host)"`,
		`echo "serving"`,
		`exec httpd -f -p 8080 -h /local`,
	}, "; ")
	script = strings.ReplaceAll(script, "${", "$${")
	return fmt.Sprintf(`
job "dockerweb" {
  group "web" {
    network {
      port "http" {
        to = 8080
      }
    }
    task "server" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", %q]
        ports   = ["http"]
        volumes = ["%s:/data:ro"]
      }
      env {
        GREETING = "hello-from-env"
      }
      template {
        data        = "page of {{ env \"NOMAD_ALLOC_ID\" }}\n"
        destination = "local/index.html"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`, image, script, hostDir)
}

// A docker job run by real agents on a real daemon: it answers on its
// host port on 127.0.0.1 with its template's page, its output reaches
// `alloc logs`, and when the client agent is killed and started again its
// container keeps running and the new client re-attaches to the same one.
// Stopping the job removes the container.
func TestDockerJobServesLogsAndSurvivesAClientRestart(t *testing.T) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Skipf("docker client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err = cli.Ping(ctx)
	cancel()
	if err != nil {
		t.Skipf("dockerd is not reachable (start it, e.g. `dockerd &`): %v", err)
	}
	image := dockerimage.Ensure(t)

	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "from-host"), []byte("bound\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "server")
	c := newAgent(t, agentSpec{name: "docker-client", extra: dockerClientConfig(s)})
	waitForReadyNodes(t, s, "docker-client")

	registerJob(t, s, dockerWebJob(image, hostDir), 30*time.Second)
	var alloc *api.Allocation
	waitFor(t, 90*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "dockerweb")
		if err != nil || len(allocs) != 1 {
			return false, fmt.Sprintf("allocs: %s (%v)", describeAllocs(allocs), err)
		}
		alloc = allocs[0]
		return alloc.ClientStatus == "running", describeAllocs(allocs)
	})
	t.Cleanup(func() { removeContainersOf(t, cli, alloc.ID) })

	var hostPort int
	for _, p := range alloc.AllocatedResources.Shared.Ports {
		if p.Label == "http" {
			hostPort = p.Value
			if p.To != 8080 {
				t.Errorf("port http maps to %d, want 8080", p.To)
			}
		}
	}
	if hostPort == 0 {
		t.Fatalf("the alloc has no http port: %+v", alloc.AllocatedResources.Shared.Ports)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(hostPort) + "/index.html"
	wantPage := "page of " + alloc.ID + "\n"
	waitForPage(t, url, wantPage)

	var logs string
	waitFor(t, 30*time.Second, func() (bool, string) {
		var code int
		logs, code = s.cli("alloc", "logs", alloc.ID, "server")
		return code == 0 && strings.Contains(logs, "serving"), fmt.Sprintf("alloc logs (exit %d): %s", code, logs)
	})
	for _, want := range []string{"greeting=hello-from-env\n", "task_dir=/local\n", "volume=bound\n"} {
		if !strings.Contains(logs, want) {
			t.Errorf("alloc logs lack %q:\n%s", want, logs)
		}
	}

	before := containersOf(t, cli, alloc.ID)
	if len(before) != 1 || before[0].State != "running" {
		t.Fatalf("containers of the alloc: %+v, want one running", before)
	}
	node, _, err := s.api().Nodes().Info(alloc.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.kill()
	if now := containersOf(t, cli, alloc.ID); len(now) != 1 || now[0].ID != before[0].ID || now[0].State != "running" {
		t.Fatalf("killing the client agent changed its container: %+v, was %s", now, before[0].ID)
	}
	waitForPage(t, url, wantPage)

	c.start()
	// The restarted client registers again, then re-attaches: it serves
	// the alloc's stats once its runner holds the task.
	waitFor(t, 60*time.Second, func() (bool, string) {
		n, _, err := s.api().Nodes().Info(alloc.NodeID, nil)
		if err != nil {
			return false, err.Error()
		}
		if n.Status != "ready" || n.ModifyIndex <= node.ModifyIndex {
			return false, fmt.Sprintf("node %s at index %d (was %d)", n.Status, n.ModifyIndex, node.ModifyIndex)
		}
		u, err := c.api().Allocations().Stats(alloc.ID, nil)
		if err != nil {
			return false, "stats: " + err.Error()
		}
		return u.Tasks["server"] != nil, fmt.Sprintf("stats %+v", u)
	})
	waitForEvalsDone(t, s, "dockerweb")
	a, _, err := s.api().Allocations().Info(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts := a.TaskStates["server"]; a.ClientStatus != "running" || ts == nil || ts.State != "running" || ts.Restarts != 0 {
		t.Fatalf("after the client restart: alloc %s, task %+v", a.ClientStatus, ts)
	}
	if now := containersOf(t, cli, alloc.ID); len(now) != 1 || now[0].ID != before[0].ID || now[0].State != "running" {
		t.Fatalf("after the client restart the alloc's containers are %+v, want the same one (%s) running", now, before[0].ID)
	}
	waitForPage(t, url, wantPage)

	if _, _, err := s.api().Jobs().Deregister("dockerweb", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() (bool, string) {
		now := containersOf(t, cli, alloc.ID)
		return len(now) == 0, fmt.Sprintf("containers after the stop: %+v", now)
	})
}

// waitForPage waits until url answers 200 with body want.
func waitForPage(t *testing.T, url, want string) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	waitFor(t, 30*time.Second, func() (bool, string) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && string(body) == want, fmt.Sprintf("GET %s: %d %q, want %q", url, resp.StatusCode, body, want)
	})
}

// containersOf lists every container Drover labelled with the alloc.
func containersOf(t *testing.T, cli *client.Client, allocID string) []container.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelAllocID+"="+allocID))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// removeContainersOf removes what a failed test left of the alloc.
func removeContainersOf(t *testing.T, cli *client.Client, allocID string) {
	for _, ct := range containersOf(t, cli, allocID) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := cli.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Errorf("removing container %s: %v", ct.ID, err)
		}
		cancel()
	}
}

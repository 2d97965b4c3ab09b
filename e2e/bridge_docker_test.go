//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// bridgeDockerJob is a docker job in bridge mode, with an exec task in
// the same group: both share the alloc's namespace, so the exec task
// reaches the docker task's server on the namespace's loopback and
// serves what it fetched.
func bridgeDockerJob(image string) string {
	return fmt.Sprintf(`
job "bridgedock" {
  group "web" {
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
      port "side" {
        to = 9090
      }
    }
    task "server" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "echo docker-page-$NOMAD_ALLOC_ID > /local/index.html; exec httpd -f -p 8080 -h /local"]
        ports   = ["http"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
    task "sidecar" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "until busybox wget -q -O /local/index.html http://127.0.0.1:8080/index.html; do sleep 0.2; done; exec busybox httpd -f -p 9090 -h /local"]
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

// A docker job in bridge mode through real agents: its task answers on
// 127.0.0.1 at its host port, an exec task of the same alloc reaches it
// on the shared namespace's loopback, and stopping the job removes the
// pause container with the namespace.
func TestBridgeDockerJobServesOnItsHostPortAndSharesItsNetworkWithExec(t *testing.T) {
	skipUnlessBridge(t)
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	image := dockerimage.Ensure(t)
	pause := dockerimage.EnsurePause(t)
	extra := "server {\n  enabled = true\n  bootstrap_expect = 1\n}\n" + bridgeClient("") +
		fmt.Sprintf("plugin \"docker\" {\n  config {\n    infra_image = %q\n  }\n}\n", pause)
	a := newAgent(t, agentSpec{name: "bridge-docker", extra: extra})
	a.waitOneReadyNode(t)
	t.Cleanup(func() { stopJobAndWait(t, a, "bridgedock") })
	registerJob(t, a, bridgeDockerJob(image), 30*time.Second)
	allocs := waitRunning(t, a, "bridgedock", 1)
	al := allocs[0]
	t.Cleanup(func() { removeContainersOf(t, cli, al.ID) })
	want := "docker-page-" + al.ID + "\n"
	waitForPage(t, "http://127.0.0.1:"+strconv.Itoa(hostPortOf(t, al, "http"))+"/index.html", want)
	waitForPage(t, "http://127.0.0.1:"+strconv.Itoa(hostPortOf(t, al, "side"))+"/index.html", want)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.ContainerInspect(ctx, docker.SandboxName(al.ID)); err != nil {
		t.Fatalf("the alloc's pause container: %v", err)
	}
	stopJobAndWait(t, a, "bridgedock")
	waitFor(t, 30*time.Second, func() (bool, string) {
		tr := netTraces(t, a, []string{al.ID})
		if _, err := cli.ContainerInspect(ctx, docker.SandboxName(al.ID)); err == nil {
			tr = append(tr, "pause container "+docker.SandboxName(al.ID))
		}
		return len(tr) == 0, "left on the host after the stop:\n" + strings.Join(tr, "\n")
	})
}

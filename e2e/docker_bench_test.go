//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// TestBenchDockerStart is the docker driver's benchmark (`make
// bench-tasks`; it only runs when DROVER_BENCH_TASKS is set): 20 and then
// 100 containers of a local image, from registration until every task
// runs and from deregistration until every container is removed, against
// what the Engine itself needs for the same containers driven from a
// shell loop (`docker run -d`, then `docker rm -f`).
func TestBenchDockerStart(t *testing.T) {
	if os.Getenv("DROVER_BENCH_TASKS") == "" {
		t.Skip("a whole-machine benchmark: run it with make bench-tasks")
	}
	dockerimage.Client(t)
	image := dockerimage.Ensure(t)
	for _, n := range []int{20, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			run, rm := dockerLoop(t, image, n)
			toRunning, toRemoved := benchDocker(t, image, n)
			t.Logf("BENCH driver=docker containers=%d register-to-all-running=%.2fs (docker run -d loop %.2fs, %+.0f%%) "+
				"deregister-to-all-removed=%.2fs (docker rm -f loop %.2fs)",
				n, toRunning.Seconds(), run.Seconds(), 100*(toRunning.Seconds()/run.Seconds()-1), toRemoved.Seconds(), rm.Seconds())
		})
	}
}

// dockerLoop times n `docker run -d` of the image from a shell loop, then
// n `docker rm -f` of them.
func dockerLoop(t *testing.T, image string, n int) (run, rm time.Duration) {
	t.Helper()
	label := "drover-bench-loop"
	script := fmt.Sprintf(`for i in $(seq %d); do docker run -d --label %s=1 --memory 64m %s sleep 3600 >/dev/null || exit 1; done`, n, label, image)
	begin := time.Now()
	if out, err := exec.Command("/bin/sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("docker run loop: %v\n%s", err, out)
	}
	run = time.Since(begin)
	ids, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+label).Output()
	if err != nil {
		t.Fatal(err)
	}
	begin = time.Now()
	for _, id := range strings.Fields(string(ids)) {
		if out, err := exec.Command("docker", "rm", "-f", id).CombinedOutput(); err != nil {
			t.Fatalf("docker rm -f %s: %v\n%s", id, err, out)
		}
	}
	return run, time.Since(begin)
}

// benchDocker runs a job of n docker tasks on one agent and times it to
// all running, then to every container removed.
func benchDocker(t *testing.T, image string, n int) (toRunning, toRemoved time.Duration) {
	t.Helper()
	a := newAgent(t, agentSpec{name: "bench", extra: benchMachine})
	a.waitOneReadyNode(t)
	containers := func() int {
		out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+docker.LabelJobName+"=dstart").Output()
		if err != nil {
			return -1
		}
		return len(strings.Fields(string(out)))
	}
	config := fmt.Sprintf(`
        image   = %q
        command = "sleep"
        args    = ["3600"]`, image)
	toRunning = runBenchJob(t, a, "dstart", benchJobHCL("dstart", "docker", config, n, 64), n, containers)
	begin := time.Now()
	if _, _, err := a.api().Jobs().Deregister("dstart", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, func() (bool, string) {
		c := containers()
		return c == 0, fmt.Sprintf("%d containers left", c)
	})
	return toRunning, time.Since(begin)
}

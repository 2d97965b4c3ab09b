package docker

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/drover-sched/drover/client/drivers"
)

// A re-attached task is the same container, and its logs hold all it
// wrote exactly once: what the first driver copied, what the container
// wrote while no driver ran (from the cursor the first one kept), and what
// it writes after.
func TestRecoverReattachesToTheSameContainer(t *testing.T) {
	first, cli := newTestDriver(t, nil)
	// One FIFO per read: a second read of the same FIFO could open it
	// while the first write's end is still open, and read its EOF.
	tt := newTestTask(t, cli, shell(`echo before; echo err-before >&2; read a < /local/go1; echo "away $a"; echo "err-away" >&2; read b < /local/go2; echo "after $b"; exit 4`))
	for _, f := range []string{"go1", "go2"} {
		if err := mkfifoAt(tt.cfg.TaskDir + "/local/" + f); err != nil {
			t.Fatal(err)
		}
	}
	h, err := first.StartTask(tt.cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first output", 20*time.Second, func() bool {
		return tt.stdout.String() == "before\n" && tt.stderr.String() == "err-before\n"
	})
	first.Shutdown()
	if err := writeFIFO(tt.cfg.TaskDir+"/local/go1", "x\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the container's output while no driver runs", 20*time.Second, func() bool {
		return strings.Contains(daemonLogs(t, cli, containerIDOf(t, h)), "err-away")
	})
	if s := tt.stdout.String(); s != "before\n" {
		t.Fatalf("stdout while no driver runs = %q", s)
	}

	second := New(Options{Config: testConfig()})
	t.Cleanup(second.Shutdown)
	if err := second.RecoverTask(h); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	t.Cleanup(func() { _ = second.DestroyTask(tt.cfg.ID, true) })
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelAllocID+"="+tt.cfg.AllocID))})
	if err != nil || len(list) != 1 || list[0].ID != containerIDOf(t, h) {
		t.Fatalf("containers of the alloc after re-attach = %+v, %v; want just the original", list, err)
	}
	if st, _ := second.InspectTask(tt.cfg.ID); st == nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("re-attached task = %+v, want running", st)
	}
	waitFor(t, "the output written while away", 10*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "away x") })
	if err := writeFIFO(tt.cfg.TaskDir+"/local/go2", "now\n"); err != nil {
		t.Fatal(err)
	}
	res := waitExit(t, second, tt.cfg.ID, 30*time.Second)
	if res.ExitCode != 4 {
		t.Fatalf("exit after re-attach = %+v, want 4", res)
	}
	tt.stdout.waitOutput(t, "each line once", func(s string) bool { return s == "before\naway x\nafter now\n" })
	tt.stderr.waitOutput(t, "each line once", func(s string) bool { return s == "err-before\nerr-away\n" })
	if err := second.DestroyTask(tt.cfg.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cursorPath(tt.cfg.TaskDir, containerIDOf(t, h))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("log cursor after destroy: %v, want removed", err)
	}
}

// daemonLogs is the container's output as the daemon has it.
func daemonLogs(t *testing.T, cli *client.Client, id string) string {
	t.Helper()
	rc, err := cli.ContainerLogs(t.Context(), id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
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

func TestRecoverPicksUpAnExitWhileAway(t *testing.T) {
	first, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell(`read line < /local/go; exit 9`))
	if err := mkfifoAt(tt.cfg.TaskDir + "/local/go"); err != nil {
		t.Fatal(err)
	}
	h, err := first.StartTask(tt.cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.Shutdown()
	if err := writeFIFO(tt.cfg.TaskDir+"/local/go", "x\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the container to exit while no driver watches", 20*time.Second, func() bool {
		info, err := cli.ContainerInspect(t.Context(), containerIDOf(t, h))
		return err == nil && !info.State.Running
	})
	second := New(Options{Config: testConfig()})
	t.Cleanup(second.Shutdown)
	if err := second.RecoverTask(h); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	t.Cleanup(func() { _ = second.DestroyTask(tt.cfg.ID, true) })
	if res := waitExit(t, second, tt.cfg.ID, 20*time.Second); res.ExitCode != 9 || res.ExitUnknown {
		t.Fatalf("exit = %+v, want the real code 9", res)
	}
}

func TestRecoverOfARemovedContainerIsNotFound(t *testing.T) {
	first, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell("sleep 300"))
	h, err := first.StartTask(tt.cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.Shutdown()
	if err := cli.ContainerRemove(t.Context(), containerIDOf(t, h), container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	second := New(Options{Config: testConfig()})
	t.Cleanup(second.Shutdown)
	if err := second.RecoverTask(h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("RecoverTask = %v, want ErrTaskNotFound", err)
	}
}

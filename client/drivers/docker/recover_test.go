package docker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/drover-sched/drover/client/drivers"
)

func TestRecoverReattachesToTheSameContainer(t *testing.T) {
	first, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell(`echo before; read line < /local/go; echo "after $line"; exit 4`))
	if err := mkfifoAt(tt.cfg.TaskDir + "/local/go"); err != nil {
		t.Fatal(err)
	}
	h, err := first.StartTask(tt.cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first output", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "before") })
	first.Shutdown()

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
	if err := writeFIFO(tt.cfg.TaskDir+"/local/go", "now\n"); err != nil {
		t.Fatal(err)
	}
	res := waitExit(t, second, tt.cfg.ID, 30*time.Second)
	if res.ExitCode != 4 {
		t.Fatalf("exit after re-attach = %+v, want 4", res)
	}
	waitFor(t, "output after the re-attach", 10*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "after now") })
	if n := strings.Count(tt.stdout.String(), "before"); n != 1 {
		t.Fatalf("output from before the re-attach copied %d times: %q", n, tt.stdout.String())
	}
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

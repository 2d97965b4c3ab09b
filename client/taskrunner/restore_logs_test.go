package taskrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// copyingDriver re-attaches as a driver that copies the task's output
// itself does (docker): at once, it writes what the task wrote while no
// client watched. It records whether the stdout FIFO had a reader then:
// without one a write fails with EPIPE, and such a driver gives up.
type copyingDriver struct {
	*mock.Driver
	readerAtRecover chan error
}

func (d *copyingDriver) RecoverTask(h *drivers.TaskHandle) error {
	if err := d.Driver.RecoverTask(h); err != nil {
		return err
	}
	// A FIFO opened for writing without blocking fails with ENXIO when
	// no reader has it open.
	fd, err := unix.Open(h.Config.StdoutPath, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		_, err = unix.Write(fd, []byte("written while the client was away\n"))
		unix.Close(fd)
	}
	d.readerAtRecover <- err
	return nil
}

// A restarted client reads a task's logs before its driver re-attaches,
// so output the driver copies at re-attach reaches the task's log.
func TestTheLogsAreReadBeforeTheDriverReattaches(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	// The mock driver's task holds no end of the FIFOs (an executor's
	// task holds a reader, so its writes never meet an empty FIFO).
	drv := mock.New("", clk)
	defer drv.Shutdown()
	h := newHarness(t, &structs.Task{Name: "web", Driver: "mock", Config: map[string]any{"run_for": "1h"}}, structs.JobTypeService, drv, clk)
	go h.tr.Run()
	testutil.WaitFor(t, "task to run", h.running)

	// The client stops, leaving the task running; the next one re-attaches
	// through the same driver, which still has it.
	h.tr.Shutdown()
	<-h.tr.Done()
	cfg := h.cfg
	copying := &copyingDriver{Driver: drv, readerAtRecover: make(chan error, 1)}
	cfg.Driver, cfg.Restore = copying, true
	cfg.StartGate = make(chan struct{})
	tr2 := New(cfg)
	go tr2.Run()
	defer func() {
		tr2.Kill("test over")
		<-tr2.Done()
	}()
	select {
	case err := <-copying.readerAtRecover:
		if err != nil {
			t.Fatalf("the stdout FIFO had no reader when the driver re-attached: %v", err)
		}
	case <-time.After(testutil.DefaultWait):
		t.Fatal("the driver was never asked to re-attach")
	}
	testutil.WaitFor(t, "the line written at re-attach in the task's log", func() bool {
		out, _ := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stdout.0"))
		return strings.Contains(string(out), "written while the client was away")
	})
}

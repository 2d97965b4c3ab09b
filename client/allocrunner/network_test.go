package allocrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/network/nettest"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

func netAlloc(mode string) *structs.Allocation {
	a := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{}})
	a.Job.TaskGroups[0].Networks = structs.Networks{{Mode: mode}}
	return a
}

func netRunner(t *testing.T, alloc *structs.Allocation, m *network.Manager, restore bool, db state.DB, base string) (*AllocRunner, *recorder, *mock.Driver) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	t.Cleanup(drv.Shutdown)
	rec := &recorder{}
	cfg := Config{Alloc: alloc, Node: &structs.Node{ID: "n1"}, AllocDirBase: base, StateDB: db, Clock: clk,
		Driver:   func(string) drivers.Driver { return drv },
		OnUpdate: rec.add, Restore: restore}
	if m != nil {
		cfg.Network = m
	}
	return New(cfg), rec, drv
}

// The alloc's namespace exists before its task runs and is gone once the
// alloc is stopped; a client shutting down leaves it for the next, which
// re-attaches to it.
func TestAllocNetworkLivesAsLongAsItsTasks(t *testing.T) {
	m := nettest.NewManager(t, "drovt-ar", "10.251.24.0/24")
	alloc := netAlloc(network.ModeNone)
	ns := filepath.Join(m.Config().NetNSDir, alloc.ID)
	db, base := state.NewMemDB(), t.TempDir()
	ar, rec, _ := netRunner(t, alloc, m, false, db, base)
	go ar.Run()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	if _, err := os.Stat(ns); err != nil {
		t.Fatalf("the running alloc has no namespace: %v", err)
	}
	ar.Shutdown()
	if _, err := os.Stat(ns); err != nil {
		t.Fatalf("a client shutdown removed the alloc's namespace: %v", err)
	}

	ar2, rec2, _ := netRunner(t, alloc, m, true, db, base)
	go ar2.Run()
	ar2.Kill("stopped")
	<-ar2.Done()
	testutil.WaitFor(t, "terminal", func() bool { return structs.ClientTerminalStatus(rec2.last().ClientStatus) })
	if _, err := os.Stat(ns); !os.IsNotExist(err) {
		t.Fatalf("the stopped alloc's namespace is still there: %v", err)
	}
	if err := ar2.Destroy(); err != nil {
		t.Fatal(err)
	}
}

// A group that asks for its own network on a client that cannot make one
// fails before any task starts, saying why.
func TestAllocNetworkWithoutCNIFailsTheAlloc(t *testing.T) {
	ar, rec, _ := netRunner(t, netAlloc(network.ModeBridge), nil, false, state.NewMemDB(), t.TempDir())
	go ar.Run()
	<-ar.Done()
	last := rec.last()
	if last.ClientStatus != structs.AllocClientStatusFailed || !strings.Contains(last.ClientDescription, `network mode "bridge": this client has no CNI networking`) {
		t.Fatalf("alloc %s: %q", last.ClientStatus, last.ClientDescription)
	}
	if len(last.TaskStates) != 0 {
		t.Fatalf("tasks were started: %v", last.TaskStates)
	}
}

// A bridge-mode alloc reports its address in its namespace with its
// status, as Nomad's NetworkStatus; a restored runner reports the same.
func TestAllocReportsItsBridgeAddress(t *testing.T) {
	m := nettest.NewManager(t, "drovt-ns", "10.251.25.0/24")
	alloc := netAlloc(network.ModeBridge)
	db, base := state.NewMemDB(), t.TempDir()
	check := func(rec *recorder) {
		t.Helper()
		var ns *structs.AllocNetworkStatus
		testutil.WaitFor(t, "running with a network status", func() bool {
			a := rec.last()
			ns = a.NetworkStatus
			return a.ClientStatus == structs.AllocClientStatusRunning && ns != nil
		})
		if !strings.HasPrefix(ns.Address, "10.251.25.") || ns.InterfaceName != "eth0" {
			t.Fatalf("network status %+v, want eth0 with an address of the bridge's subnet", ns)
		}
	}
	ar, rec, _ := netRunner(t, alloc, m, false, db, base)
	go ar.Run()
	check(rec)
	first := rec.last().NetworkStatus.Address
	ar.Shutdown()

	ar2, rec2, _ := netRunner(t, alloc, m, true, db, base)
	go ar2.Run()
	check(rec2)
	if got := rec2.last().NetworkStatus.Address; got != first {
		t.Errorf("the restored runner reports %s, the first %s", got, first)
	}
	ar2.Kill("stopped")
	<-ar2.Done()
	if err := ar2.Destroy(); err != nil {
		t.Fatal(err)
	}
}

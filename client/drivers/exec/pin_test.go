package exec

import (
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

// handleParts reads the pid and the isolation's state out of a handle.
func handleParts(t *testing.T, h *drivers.TaskHandle) (int, handleState) {
	t.Helper()
	var s struct {
		Pid       int
		Isolation json.RawMessage
	}
	if err := json.Unmarshal(h.DriverState, &s); err != nil {
		t.Fatal(err)
	}
	var iso handleState
	if err := json.Unmarshal(s.Isolation, &iso); err != nil {
		t.Fatal(err)
	}
	return s.Pid, iso
}

// A script check joins the init's namespaces only while the pid is
// still that init: a pid now held by another process (here: a host
// process, and the init itself with a start time that is not its own)
// is refused, and nothing runs.
func TestAScriptCheckNeverJoinsAProcessThatIsNotTheInit(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `echo ready; exec sleep 1000`)
	h := start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	pid, st := handleParts(t, h)
	if st.InitStartTicks == 0 {
		t.Fatal("the handle does not record the init's start time")
	}
	iso := newIsolation(Options{CgroupRoot: "/sys/fs/cgroup", ChrootEnv: DefaultChrootEnv, AllowCaps: DefaultAllowCaps, PidsLimit: DefaultPidsLimit})
	host := osexec.Command("sleep", "1000")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	stale := st
	stale.InitStartTicks++
	staleJSON, _ := json.Marshal(stale)
	stateJSON, _ := json.Marshal(st)
	for _, tc := range []struct {
		name  string
		pid   int
		state []byte
	}{
		{"a host process", host.Process.Pid, stateJSON},
		{"this test", os.Getpid(), stateJSON},
		{"the init with another start time", pid, staleJSON},
	} {
		cmd, _, err := iso.ExecCommand(cfg, tc.state, tc.pid, "/bin/true", nil)
		if err == nil {
			t.Errorf("%s: would run %v", tc.name, cmd.Args)
			continue
		}
		if !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Errorf("%s: error %v is not ErrTaskNotFound", tc.name, err)
		}
	}
	cmd, started, err := iso.ExecCommand(cfg, stateJSON, pid, "/bin/true", nil)
	if err != nil {
		t.Fatalf("the live init is refused: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := started(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the command in the live init's namespaces: %v", err)
	}
}

package exec

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The init is out of the OOM killer's choice and the task is not: the
// task keeps the agent's score and cannot lower itself to the init's
// exemption, as root or not.
func TestTheInitIsExemptFromTheOOMKillerAndTheTaskIsNot(t *testing.T) {
	needRoot(t)
	const script = `echo "init=$(cat /proc/1/oom_score_adj) task=$(cat /proc/self/oom_score_adj)"
{ echo -1000 > /proc/self/oom_score_adj; } 2>/dev/null && echo "lowered-to-exempt"
echo "after=$(cat /proc/self/oom_score_adj)"`
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	initWant := "-1000"
	if !agentHolds(t, unix.CAP_SYS_RESOURCE) {
		// An agent in a container without it cannot lower a score; the
		// init keeps the agent's, and is light instead (see the e2e
		// test of an OOM inside a task).
		t.Log("the agent lacks CAP_SYS_RESOURCE: the init is not exempt")
		initWant = strings.TrimSpace(string(own))
	}
	want := fmt.Sprintf("init=%s task=%s", initWant, strings.TrimSpace(string(own)))
	for _, user := range []string{"", "root"} {
		t.Run("user="+user, func(t *testing.T) {
			d := newRootDriver(t)
			cfg, stdout, stderr := testTask(t, script)
			cfg.User = user
			start(t, d, cfg)
			if res := waitExit(t, d, cfg.ID); !res.Successful() {
				t.Fatalf("exit %+v, stderr %q", res, stderr.String())
			}
			waitOutput(t, stdout, "after=")
			out := stdout.String()
			if !strings.Contains(out, want) {
				t.Errorf("want %q, the task printed:\n%s", want, out)
			}
			if strings.Contains(out, "lowered-to-exempt") || strings.Contains(out, "after=-1000") {
				t.Errorf("the task exempted itself from the OOM killer:\n%s", out)
			}
		})
	}
}

// agentHolds reports whether this process's effective set holds c.
func agentHolds(t *testing.T, c uint) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Another name for uid 0 (toor, in the passwd the task's /etc is copied
// from) passes the scheduler, which knows names only, and is refused by
// the client, which resolves the user as the exec driver does and denies
// by uid: the task never starts and its event names the uid and root.
func TestExecTaskAsAnotherNameForUIDZeroIsRefusedByTheClient(t *testing.T) {
	etc := t.TempDir()
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	group, err := os.ReadFile("/etc/group")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "passwd"), append(passwd, []byte("toor:x:0:0:another root:/root:/bin/sh\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "group"), group, 0o644); err != nil {
		t.Fatal(err)
	}
	var env strings.Builder
	for _, d := range []string{"/bin", "/lib", "/lib64", "/sbin", "/usr"} {
		if _, err := os.Stat(d); err == nil {
			fmt.Fprintf(&env, "    %q = %q\n", d, d)
		}
	}
	fmt.Fprintf(&env, "    %q = \"/etc\"\n", etc)
	a := newAgent(t, agentSpec{name: "exec", extra: `
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
  chroot_env {
` + env.String() + `  }
}
`})
	a.waitOneReadyNode(t)
	job := `
job "toor" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "exec"
      user   = "toor"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`
	registerJob(t, a, job, 30*time.Second)
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(a, "toor")
		if err != nil || len(allocs) == 0 {
			return false, fmt.Sprintf("allocs: %s (%v)", describeAllocs(allocs), err)
		}
		for _, al := range allocs {
			if al.ClientStatus == "running" {
				t.Fatalf("a task run as toor (uid 0) started: %s", describeAllocs(allocs))
			}
			full, _, err := a.api().Allocations().Info(al.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			ts := full.TaskStates["t"]
			if ts == nil {
				continue
			}
			for _, e := range ts.Events {
				if strings.Contains(e.DisplayMessage, `"toor" has uid 0`) && strings.Contains(e.DisplayMessage, `"root"`) &&
					strings.Contains(e.DisplayMessage, "user.denylist") {
					return full.ClientStatus == "failed", "alloc not failed yet: " + full.ClientStatus
				}
			}
		}
		return false, "no event naming toor's uid and the denylist yet: " + describeAllocs(allocs)
	})
}

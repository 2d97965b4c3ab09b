package jobspec

import (
	"strings"
	"testing"
)

// TestTemplateOwnerAndPermsAreRead: uid and gid are whole numbers (-1
// meaning "leave the owner"), kept as written; perms is kept as text, for
// job validation to judge (it refuses setuid, setgid and sticky bits).
func TestTemplateOwnerAndPermsAreRead(t *testing.T) {
	job := mustParse(t, `job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      template {
        data        = "x"
        destination = "local/x"
        perms       = "4755"
        uid         = 1000
        gid         = -1
      }
    }
  }
}`)
	tm := job.TaskGroups[0].Tasks[0].Templates[0]
	if tm.Uid == nil || *tm.Uid != 1000 || tm.Gid == nil || *tm.Gid != -1 {
		t.Fatalf("uid %v gid %v, want 1000 and -1", tm.Uid, tm.Gid)
	}
	if tm.Perms == nil || *tm.Perms != "4755" {
		t.Fatalf("perms %v, want \"4755\" as written", tm.Perms)
	}

	_, err := parseString(t, "job.hcl", `job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      template {
        data        = "x"
        destination = "local/x"
        uid         = "nobody"
      }
    }
  }
}`)
	if err == nil || !strings.Contains(err.Error(), "uid") {
		t.Fatalf("a uid that is a name must be refused naming uid, got %v", err)
	}
}

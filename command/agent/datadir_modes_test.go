package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/command/agent/config"
)

// A real agent (server and client, not dev) keeps the server's data dir
// and its raft log 0700 and the client's state dir 0700, and lets a
// task's user through the client's data dir and alloc base (0711), even
// when the directories were there before with looser modes.
func TestAgentDataDirModes(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"server", "server/raft", "client", "client/alloc", "client/client"} {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	NewTestAgent(t, func(c *config.Config) { c.DevMode = false; c.DataDir = dir })
	want := map[string]os.FileMode{
		"server": 0o700, "server/raft": 0o700,
		"client": 0o711, "client/alloc": 0o711, "client/client": 0o700,
	}
	for sub, mode := range want {
		fi, err := os.Stat(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %#o, want %#o", sub, got, mode)
		}
	}
}

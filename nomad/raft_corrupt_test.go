package nomad

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The finding: a corrupt raft.db gave a raw bolt panic or SIGBUS naming
// no file. The server must refuse to start with a message naming the file
// and what to do.
func TestACorruptRaftLogStopsTheServerNamingTheFile(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, itJob("web", 1))
	s.Shutdown()

	path := filepath.Join(cfg.DataDir, "raft", "raft.db")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file in the middle of its pages, as a full disk would.
	if err := os.Truncate(path, st.Size()/3+100); err != nil {
		t.Fatal(err)
	}
	cfg2 := testConfig(t)
	cfg2.DataDir, cfg2.NodeID = cfg.DataDir, cfg.NodeID
	s2, err := NewServer(cfg2)
	if err == nil {
		s2.Shutdown()
		t.Fatal("a server must not start from a corrupt raft.db")
	}
	for _, want := range []string{path, "Move the server's raft directory aside"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q should mention %q", err, want)
		}
	}
}

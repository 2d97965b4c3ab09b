package agent

import (
	"strings"
	"testing"
)

func TestRaftMultiplierIsParsedAndBounded(t *testing.T) {
	c, warnings, err := ParseConfig("agent.hcl", []byte("server {\n  enabled = true\n  raft_multiplier = 5\n}\n"))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	full := DefaultConfig().Merge(c)
	s, err := full.serverConfig("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.RaftMultiplier != 5 {
		t.Fatalf("server RaftMultiplier = %d, want 5", s.RaftMultiplier)
	}
	later, _, err := ParseConfig("later.hcl", []byte("server {\n  job_max_count = 7\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := full.Merge(later).Server.RaftMultiplier; got != 5 {
		t.Fatalf("after merging a file without it: %d", got)
	}
	for src, want := range map[string]string{
		"server {\n  raft_multiplier = 0\n}\n":     "server.raft_multiplier: expected a number between 1 and 10",
		"server {\n  raft_multiplier = 11\n}\n":    "server.raft_multiplier: expected a number between 1 and 10",
		"server {\n  raft_multiplier = \"x\"\n}\n": "server.raft_multiplier",
	} {
		_, _, err := ParseConfig("agent.hcl", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

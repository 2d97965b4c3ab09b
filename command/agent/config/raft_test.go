package config

import (
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/nomad"
)

func TestRaftMultiplierIsParsedAndBounded(t *testing.T) {
	checkServerIntKey(t, "raft_multiplier", 5,
		func(s *nomad.Config) int { return s.RaftMultiplier },
		func(c *Config) int { return c.Server.RaftMultiplier },
		map[string]string{
			"server {\n  raft_multiplier = 0\n}\n":     "server.raft_multiplier: expected a number between 1 and 10",
			"server {\n  raft_multiplier = 11\n}\n":    "server.raft_multiplier: expected a number between 1 and 10",
			"server {\n  raft_multiplier = \"x\"\n}\n": "server.raft_multiplier",
		})
}

// checkServerIntKey checks a whole-number key of the server block: set to
// val it reaches the server's config (server), a later file without it
// keeps it (merged), and each of bad is refused with its message.
func checkServerIntKey(t *testing.T, key string, val int, server func(*nomad.Config) int, merged func(*Config) int, bad map[string]string) {
	t.Helper()
	c, warnings, err := Parse("agent.hcl", []byte("server {\n  enabled = true\n  "+key+" = "+strconv.Itoa(val)+"\n}\n"))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	full := Default().Merge(c)
	s, err := full.ForServer("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := server(s); got != val {
		t.Fatalf("server config has %s = %d, want %d", key, got, val)
	}
	later, _, err := Parse("later.hcl", []byte("server {\n  job_max_count = 7\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := merged(full.Merge(later)); got != val {
		t.Fatalf("%s after merging a file without it: %d", key, got)
	}
	for src, want := range bad {
		_, _, err := Parse("agent.hcl", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

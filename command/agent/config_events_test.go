package agent

import (
	"strings"
	"testing"
)

func TestEventBufferSizeIsParsedAndBounded(t *testing.T) {
	c, warnings, err := ParseConfig("agent.hcl", []byte("server {\n  enabled = true\n  event_buffer_size = 500\n}\n"))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	full := DefaultConfig().Merge(c)
	s, err := full.serverConfig("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.EventBufferEvents != 500 {
		t.Fatalf("server EventBufferEvents = %d, want 500", s.EventBufferEvents)
	}
	// A later file without the key keeps it.
	later, _, err := ParseConfig("later.hcl", []byte("server {\n  job_max_count = 7\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := full.Merge(later).Server.EventBufferSize; got != 500 {
		t.Fatalf("after merging a file without it: %d", got)
	}
	for src, want := range map[string]string{
		"server {\n  event_buffer_size = 0\n}\n":       "server.event_buffer_size: 0 would switch the limit off",
		"server {\n  event_buffer_size = 2000000\n}\n": "server.event_buffer_size: expected a number between 1 and 1048576",
	} {
		_, _, err := ParseConfig("agent.hcl", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

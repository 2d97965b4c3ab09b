package config

import (
	"strings"
	"testing"
	"time"
)

// server.reconnect_report_window reaches the server's scheduler config; a
// negative one is refused with the key named.
func TestReconnectReportWindowReachesTheServer(t *testing.T) {
	c, warnings, err := Parse("agent.hcl", []byte("server {\n  enabled = true\n  reconnect_report_window = \"2m\"\n}\n"))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %q", err, warnings)
	}
	full := Default().Merge(c)
	s, err := full.ForServer("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ReconnectReportWindow != 2*time.Minute {
		t.Fatalf("ReconnectReportWindow = %v, want 2m", s.ReconnectReportWindow)
	}

	c, _, err = Parse("agent.hcl", []byte("server {\n  reconnect_report_window = \"-1m\"\n}\n"))
	if err == nil {
		s, err = Default().Merge(c).ForServer("/data", nil)
		if err == nil {
			err = s.Validate()
		}
	}
	if err == nil || !strings.Contains(err.Error(), "reconnect_report_window") {
		t.Fatalf("a negative window: got %v, want an error naming reconnect_report_window", err)
	}
}

package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad"
)

func TestLimitsBlockParsesMergesAndReachesTheServer(t *testing.T) {
	c, warnings, err := Parse("agent.hcl", []byte(`
limits {
  https_handshake_timeout         = "7s"
  http_max_conns_per_client       = 50
  rpc_handshake_timeout           = "3s"
  rpc_max_conns_per_client        = 60
  rpc_max_streams_per_session     = 512
  http_max_body_size              = "2MiB"
  max_blocking_queries            = 1000
  max_blocking_queries_per_client = 10
}
server {
  enabled             = true
  job_max_source_size = "2M"
  job_max_count       = 500
  job_max_allocs      = 900
}
`))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	full := Default().Merge(c)
	l := full.Limits
	if l.HTTPSHandshakeTimeout != 7*time.Second || l.HTTPMaxConnsPerClient != 50 || l.RPCHandshakeTimeout != 3*time.Second ||
		l.RPCMaxConnsPerClient != 60 || l.RPCMaxStreamsPerSession != 512 || l.HTTPMaxBodySize != 2<<20 ||
		l.MaxBlockingQueries != 1000 || l.MaxBlockingQueriesPerClient != 10 {
		t.Fatalf("limits: %+v", l)
	}
	if err := full.Validate(); err != nil && !strings.Contains(err.Error(), "data_dir") {
		t.Fatalf("valid limits refused: %v", err)
	}
	s, err := full.ForServer("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.JobMaxSourceSize != 2_000_000 || s.JobMaxCount != 500 || s.JobMaxAllocs != 900 ||
		s.RPCMaxConnsPerClient != 60 || s.RPCHandshakeTimeout != 3*time.Second || s.RPCMaxStreamsPerSession != 512 ||
		s.MaxBlockingQueries != 1000 || s.MaxBlockingQueriesPerClient != 10 {
		t.Fatalf("server config: %+v", s)
	}

	// rpc_max_streams is the same setting under its shorter name.
	short, _, err := Parse("short.hcl", []byte("limits {\n  rpc_max_streams = 300\n}\n"))
	if err != nil || short.Limits.RPCMaxStreamsPerSession != 300 {
		t.Fatalf("rpc_max_streams = 300: %v, got %d", err, short.Limits.RPCMaxStreamsPerSession)
	}

	// A later file sets one key; the others keep their values.
	later, _, err := Parse("later.hcl", []byte("limits {\n  http_max_conns_per_client = 7\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	merged := full.Merge(later)
	if merged.Limits.HTTPMaxConnsPerClient != 7 || merged.Limits.RPCMaxConnsPerClient != 60 {
		t.Fatalf("merged limits: %+v", merged.Limits)
	}
	// Copies do not alias.
	cp := merged.Copy()
	cp.Limits.HTTPMaxBodySize = 1
	if merged.Limits.HTTPMaxBodySize == 1 {
		t.Fatal("Copy shares the limits")
	}
}

func TestLimitsDefaultsAreNomads(t *testing.T) {
	l := Default().Limits
	if l.HTTPSHandshakeTimeout != 5*time.Second || l.HTTPMaxConnsPerClient != 100 || l.RPCHandshakeTimeout != 5*time.Second ||
		l.RPCMaxConnsPerClient != 100 || l.RPCMaxStreamsPerSession != 1024 || l.MaxBlockingQueries != nomad.DefaultMaxBlockingQueries ||
		l.MaxBlockingQueriesPerClient != 256 || l.HTTPMaxBodySize != DefaultHTTPMaxBodySize {
		t.Fatalf("defaults: %+v", l)
	}
	if s := Default().Server; s.JobMaxSourceSize != 1_000_000 || s.JobMaxCount != 10_000 || s.JobMaxAllocs != 20_000 {
		t.Fatalf("server defaults: %+v", s)
	}
}

func TestBadLimitsAreErrorsNamingTheKey(t *testing.T) {
	cases := []struct{ src, want string }{
		{"limits {\n  http_max_conns_per_client = 0\n}\n", "agent.hcl:2:31: limits.http_max_conns_per_client: 0 would switch the limit off, which Drover does not allow"},
		{"limits {\n  rpc_max_conns_per_client = -3\n}\n", "limits.rpc_max_conns_per_client: expected a number between 1 and"},
		{"limits {\n  rpc_handshake_timeout = \"0s\"\n}\n", "limits.rpc_handshake_timeout: 0 would switch the timeout off"},
		{"limits {\n  https_handshake_timeout = \"1h\"\n}\n", "limits.https_handshake_timeout: expected a duration between 100ms and 5m0s, got 1h0m0s"},
		{"limits {\n  http_max_body_size = \"lots\"\n}\n", `limits.http_max_body_size: expected a size such as "1MB", "512KiB" or a number of bytes, got "lots"`},
		{"limits {\n  http_max_body_size = 10\n}\n", "limits.http_max_body_size: expected a size between 1.0 KiB and 1.0 GiB"},
		{"server {\n  job_max_source_size = \"64MB\"\n}\n", "server.job_max_source_size: expected a size between 1.0 KiB and 4.0 MiB"},
		{"server {\n  job_max_count = 0\n}\n", "server.job_max_count: 0 would switch the limit off"},
		{"limits {\n  frobs = 1\n}\n", ""},
	}
	for _, tc := range cases {
		_, warnings, err := Parse("agent.hcl", []byte(tc.src))
		if tc.want == "" {
			if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], `unknown key "limits.frobs"`) {
				t.Errorf("%q: want a warning for the unknown key, got %v %v", tc.src, warnings, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v\nshould contain %q", tc.src, err, tc.want)
		}
	}

	c := Default()
	c.Server.Enabled, c.DevMode = true, true
	c.Limits.MaxBlockingQueriesPerClient = c.Limits.MaxBlockingQueries + 1
	c.Limits.HTTPMaxConnsPerClient = 0
	err := c.Validate()
	for _, want := range []string{
		fmt.Sprintf("limits.max_blocking_queries_per_client (%d) must not exceed limits.max_blocking_queries (%d)", nomad.DefaultMaxBlockingQueries+1, nomad.DefaultMaxBlockingQueries),
		"limits.http_max_conns_per_client must be positive, got 0",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nshould contain %q", err, want)
		}
	}
}

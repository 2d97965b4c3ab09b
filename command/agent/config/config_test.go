package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/docker"
)

func intPtr(n int) *int { return &n }

// requireEqual compares two configs and prints both as JSON on a mismatch,
// which is far easier to read than %+v of nested structs.
func requireEqual(t *testing.T, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", "  ")
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("mismatch\nwant: %s\n got: %s", w, g)
	}
}

func parseFile(t *testing.T, path string) (*Config, []string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, warnings, err := Parse(path, src)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return c, warnings
}

func TestNomadAgentFileParsesEveryKey(t *testing.T) {
	got, warnings := parseFile(t, "testdata/nomad-agent.hcl")
	want := &Config{
		Name: "node-a", Datacenter: "dc2", Region: "europe", DataDir: "/var/lib/nomad",
		BindAddr: "0.0.0.0", LogLevel: "DEBUG", LogJSON: true,
		Ports:     Ports{HTTP: 5646, RPC: 5647, Serf: 5648},
		Addresses: Addresses{HTTP: "127.0.0.1", RPC: "10.0.0.5"},
		Advertise: Advertise{HTTP: "10.0.0.5:5646", RPC: "10.0.0.5", Serf: "10.0.0.5"},
		Server: ServerConfig{
			Enabled: true, BootstrapExpect: 3,
			ServerJoin: ServerJoin{
				RetryJoin:     []string{"10.0.0.6:5647", "10.0.0.7:5647"},
				RetryInterval: 15 * time.Second, RetryMax: 4,
			},
			NumSchedulers:          intPtr(2),
			EnabledSchedulers:      []string{"service", "batch"},
			HeartbeatGrace:         20 * time.Second,
			MinHeartbeatTTL:        12 * time.Second,
			MaxHeartbeatsPerSecond: 75.5,
			FailoverHeartbeatTTL:   6 * time.Minute,
			EvalGCThreshold:        2 * time.Hour,
			JobGCThreshold:         8 * time.Hour,
			NodeGCThreshold:        48 * time.Hour,
			DeploymentGCThreshold:  3 * time.Hour,
			BatchEvalGCThreshold:   36 * time.Hour,
			EvalGCInterval:         3 * time.Minute,
			JobGCInterval:          7 * time.Minute,
			NodeGCInterval:         11 * time.Minute,
			DeploymentGCInterval:   13 * time.Minute,
		},
		Client: ClientConfig{
			Enabled:    true,
			Servers:    []string{"10.0.0.6:5647"},
			ServerJoin: ServerJoin{RetryJoin: []string{"10.0.0.8:5647"}},
			NodeClass:  "compute", NodePool: "batch-pool",
			Meta:            map[string]string{"rack": "r12", "zone": "z1"},
			Reserved:        Reserved{CPU: 500, MemoryMB: 512, DiskMB: 1024, ReservedPorts: "22,80,8000-8010"},
			CPUTotalCompute: 8000, MemoryTotalMB: 16384, NetworkInterface: "eth0",
			GCInterval: 2 * time.Minute, GCMaxAllocs: 40,
			GCDiskUsageThreshold: 85, GCInodeUsageThreshold: 75.5,
			Options:        map[string]string{"driver.allowlist": "raw_exec,exec", "fingerprint.skip_disk": "1"},
			MinDynamicPort: 21000, MaxDynamicPort: 22000,
		},
		Plugins: map[string]*PluginConfig{"raw_exec": {Name: "raw_exec", Config: map[string]any{"enabled": true}}},
		Files:   []string{"testdata/nomad-agent.hcl"},
	}
	requireEqual(t, want, got)

	// The serf port and serf advertise address are the only things this
	// file sets that Drover ignores.
	if len(warnings) != 2 {
		t.Fatalf("want 2 serf warnings, got %q", warnings)
	}
	for _, w := range warnings {
		if !strings.Contains(w, "serf") || !strings.HasPrefix(w, "testdata/nomad-agent.hcl:") {
			t.Errorf("warning %q should name the serf key with file:line", w)
		}
	}
}

func TestJSONAgentFileParses(t *testing.T) {
	got, warnings := parseFile(t, "testdata/agent.json")
	want := &Config{
		Name: "node-j", Datacenter: "dc3", DataDir: "/srv/drover", LogLevel: "warn",
		Ports: Ports{HTTP: 6646, RPC: 6647},
		Server: ServerConfig{Enabled: true, BootstrapExpect: 1, HeartbeatGrace: 30 * time.Second,
			ServerJoin: ServerJoin{RetryJoin: []string{"10.1.0.1:6647"}}},
		Client: ClientConfig{Enabled: true, Meta: map[string]string{"rack": "j1"},
			Options: map[string]string{"driver.raw_exec.enable": "1"}, Reserved: Reserved{CPU: 100}},
		Plugins: map[string]*PluginConfig{"mock_driver": {Name: "mock_driver", Config: map[string]any{}}},
		Files:   []string{"testdata/agent.json"},
	}
	requireEqual(t, want, got)
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"consul"`) || !strings.HasPrefix(warnings[0], "testdata/agent.json:12:") {
		t.Fatalf("want one warning for consul at testdata/agent.json:12, got %q", warnings)
	}
}

func TestUnsupportedKeysWarnWithFileAndLine(t *testing.T) {
	src := `name = "a"
consul {
  address = "127.0.0.1:8500"
}
vault { enabled = true }
telemetry { statsd_address = "127.0.0.1:8125" }
audit { enabled = true }
tls { rpc_upgrade_mode = true }
ui { enabled = true }
limits { http_max_conns_per_client = 10 }
frobnicate = 3
server {
  enabled = true
  raft_protocol = 3
  wibble = "x"
}
plugin "docker" {
  config { allow_privileged = true }
}
plugin "qemu" {}
`
	c, warnings, err := Parse("agent.hcl", []byte(src))
	if err != nil {
		t.Fatalf("unsupported keys must not fail: %v", err)
	}
	if !c.Server.Enabled || c.Name != "a" {
		t.Fatalf("supported keys around the unsupported ones were lost: %+v", c)
	}
	want := []string{
		`agent.hcl:2: "consul"`, `agent.hcl:5: "vault"`, `agent.hcl:7: "audit"`,
		`agent.hcl:9: "ui"`, `agent.hcl:11: unknown key "frobnicate"`,
		`agent.hcl:6: "telemetry.statsd_address"`,
		`agent.hcl:8: "tls.rpc_upgrade_mode"`,
		`agent.hcl:14: "server.raft_protocol"`, `agent.hcl:15: unknown key "server.wibble"`,
		`agent.hcl:20: unknown plugin "qemu"`,
	}
	if len(warnings) != len(want) {
		t.Fatalf("want %d warnings, got %d:\n%s", len(want), len(warnings), strings.Join(warnings, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d: want prefix %q, got %q", i, w, warnings[i])
		}
	}
}

func TestMalformedValuesAreErrorsWithPositions(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"port is not a number", "ports {\n  http = \"web\"\n}\n", `agent.hcl:2:10: ports.http: expected a whole number, got string "web"`},
		{"port out of range", "ports {\n  rpc = 70000\n}\n", "agent.hcl:2:9: ports.rpc: expected a number between 0 and 65535, got 70000"},
		{"bad duration", "server {\n  heartbeat_grace = \"10 sec\"\n}\n", `agent.hcl:2:21: server.heartbeat_grace: expected a duration such as "30s" or "5m", got "10 sec"`},
		{"bool expected", "server {\n  enabled = \"maybe\"\n}\n", `agent.hcl:2:13: server.enabled: expected true or false, got string "maybe"`},
		{"list expected", "client {\n  servers = \"a:4647\"\n}\n", `agent.hcl:2:13: client.servers: expected a list of strings, got string "a:4647"`},
		{"fractional count", "server {\n  bootstrap_expect = 1.5\n}\n", "agent.hcl:2:22: server.bootstrap_expect: expected a whole number, got 1.5"},
		{"bad log level", "log_level = \"LOUD\"\n", `agent.hcl:1:13: log_level: expected one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, got "LOUD"`},
		{"bad reserved ports", "client {\n  reserved {\n    reserved_ports = \"22,abc\"\n  }\n}\n", `agent.hcl:3:22: client.reserved.reserved_ports: expected ports such as`},
		{"bad scheduler", "server {\n  enabled_schedulers = [\"service\", \"cron\"]\n}\n", `agent.hcl:2:24: server.enabled_schedulers: expected scheduler types among`},
		{"threshold over 100", "client {\n  gc_disk_usage_threshold = 120\n}\n", "agent.hcl:2:29: client.gc_disk_usage_threshold: expected a number between 0 and 100, got 120"},
		{"block given as argument", "server = true\n", "agent.hcl:1:1: server: expected a block (server { ... }), not an argument"},
		{"argument given as block", "server {\n  enabled {}\n}\n", "agent.hcl:2:3: server.enabled: expected an argument (enabled = ...), not a block"},
		{"syntax error", "server {\n", "agent.hcl:1:8: Unclosed configuration block"},
		{"nesting that would overflow the parser's stack", "client {\n  meta = { a = " + strings.Repeat("[", 100_000) + "1" + strings.Repeat("]", 100_000) + " }\n}\n",
			"agent.hcl:2,114-115: Nesting too deep; Blocks, brackets, parentheses, templates and chained operators nest more than 100 levels deep here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("agent.hcl", []byte(tc.src))
			if err == nil {
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\nshould contain %q", err, tc.want)
			}
		})
	}
}

func TestAllMalformedValuesAreReportedAtOnce(t *testing.T) {
	_, _, err := Parse("a.hcl", []byte("ports {\n  http = \"x\"\n  rpc = -1\n}\nlog_json = \"sometimes\"\n"))
	ce, ok := err.(*Error)
	if !ok || len(ce.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
}

func TestHCL1AndHCL2MapSpellingsAreEquivalent(t *testing.T) {
	hcl1 := "client {\n  meta {\n    \"rack.id\" = \"r1\"\n  }\n  options {\n    \"driver.raw_exec.enable\" = \"1\"\n  }\n}\n"
	hcl2 := "client {\n  meta = {\n    \"rack.id\" = \"r1\"\n  }\n  options = { \"driver.raw_exec.enable\" = 1 }\n}\n"
	for name, src := range map[string]string{"hcl1": hcl1, "hcl2": hcl2} {
		c, _, err := Parse("a.hcl", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		requireEqual(t, map[string]string{"rack.id": "r1"}, c.Client.Meta)
		requireEqual(t, map[string]string{"driver.raw_exec.enable": "1"}, c.Client.Options)
	}
}

func TestHCL1RewriteKeepsErrorPositions(t *testing.T) {
	src := "client {\n  options {\n    \"a\" = \"1\"\n  }\n}\nports { http = \"x\" }\n"
	_, _, err := Parse("a.hcl", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "a.hcl:6:16: ports.http") {
		t.Fatalf("position after a rewritten block moved: %v", err)
	}
}

func TestLaterFilesWinAndMapsMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.hcl", `
datacenter = "dc1"
log_level = "INFO"
server {
  enabled = true
  heartbeat_grace = "10s"
}
client {
  servers = ["a:4647"]
  meta { rack = "r1", zone = "z1" }
}
`)
	confDir := filepath.Join(dir, "conf.d")
	if err := os.Mkdir(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write("conf.d/10-dc.hcl", `datacenter = "dc2"`)
	write("conf.d/20-client.json", `{"client": {"servers": ["b:4647"], "meta": {"zone": "z2"}}}`)
	write("conf.d/README.txt", `not config`)

	c, warnings, err := loadPaths([]string{base, confDir})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("load: %v %q", err, warnings)
	}
	if c.Datacenter != "dc2" || c.LogLevel != "INFO" || !c.Server.Enabled || c.Server.HeartbeatGrace != 10*time.Second {
		t.Fatalf("merge lost or kept the wrong values: %+v", c)
	}
	requireEqual(t, []string{"b:4647"}, c.Client.Servers)
	requireEqual(t, map[string]string{"rack": "r1", "zone": "z2"}, c.Client.Meta)
	if len(c.Files) != 3 {
		t.Fatalf("want the 3 config files recorded, got %q", c.Files)
	}
}

func TestProblemsFromSeveralFilesAreReportedTogether(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.hcl")
	b := filepath.Join(dir, "b.hcl")
	os.WriteFile(a, []byte(`ports { http = "x" }`), 0o600)
	os.WriteFile(b, []byte(`server { heartbeat_grace = "soon" }`), 0o600)
	_, _, err := loadPaths([]string{a, b})
	if err == nil || !strings.Contains(err.Error(), "a.hcl:1:") || !strings.Contains(err.Error(), "b.hcl:1:") {
		t.Fatalf("want problems of both files, got %v", err)
	}
}

func TestFlagsWinOverFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.hcl")
	os.WriteFile(p, []byte("region = \"r1\"\ndatacenter = \"dc1\"\ndata_dir = \"/tmp/x\"\nclient { enabled = true }\n"), 0o600)
	args, err := ParseArgs([]string{"-config", p, "-dc", "dc9", "-servers", "a:1,b:2", "-meta", "k=v", "-retry-join", "c:3", "-log-level", "debug"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := Build(args)
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "r1" || c.Datacenter != "dc9" || c.LogLevel != "debug" || !c.Client.Enabled {
		t.Fatalf("flags did not win: %+v", c)
	}
	requireEqual(t, []string{"a:1", "b:2"}, c.Client.Servers)
	requireEqual(t, []string{"c:3"}, c.Client.ServerJoin.RetryJoin)
	requireEqual(t, "v", c.Client.Meta["k"])
}

func TestDevConfigRunsEverythingOnLoopback(t *testing.T) {
	args, err := ParseArgs([]string{"-dev"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := Build(args)
	if err != nil {
		t.Fatal(err)
	}
	if !c.DevMode || !c.Server.Enabled || !c.Client.Enabled || c.BindAddr != "127.0.0.1" ||
		c.Ports.HTTP != 4646 || c.Ports.RPC != 4647 || c.LogLevel != "INFO" {
		t.Fatalf("dev config: %+v", c)
	}
	cc := c.ForClient("/tmp/d", []string{"127.0.0.1:4647"}, "127.0.0.1:4646", nil)
	requireEqual(t, []string{"raw_exec", "exec", "docker", "mock"}, cc.EnabledDrivers)
	if cc.Options["driver.raw_exec.enable"] != "1" || !cc.LoopbackOnly || cc.AdvertiseHTTP != "127.0.0.1:4646" {
		t.Fatalf("dev client config: %+v", cc)
	}
}

func TestValidateNamesWhatIsMissing(t *testing.T) {
	c := Default()
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "neither server nor client") || !strings.Contains(err.Error(), "data_dir") {
		t.Fatalf("got %v", err)
	}
	c.Client.Enabled = true
	c.DataDir = "/tmp/x"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "client has no servers") {
		t.Fatalf("got %v", err)
	}
}

func TestServerConfigFromAgentConfig(t *testing.T) {
	c, _ := parseFile(t, "testdata/nomad-agent.hcl")
	full := Default().Merge(c)
	s, err := full.ForServer("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.NodeName != "node-a" || s.Region != "europe" || s.Datacenter != "dc2" || s.DataDir != "/data/server" ||
		s.RPCAddr != "10.0.0.5:5647" || s.RPCAdvertise != "10.0.0.5:5647" || s.BootstrapExpect != 3 ||
		s.NumSchedulers != 2 || s.HeartbeatGrace != 20*time.Second || s.MinHeartbeatTTL != 12*time.Second ||
		s.MaxHeartbeatsPerSecond != 75.5 || s.FailoverHeartbeatTTL != 6*time.Minute ||
		s.EvalGCThreshold != 2*time.Hour || s.JobGCThreshold != 8*time.Hour ||
		s.NodeGCThreshold != 48*time.Hour || s.DeploymentGCThreshold != 3*time.Hour ||
		s.BatchEvalGCThreshold != 36*time.Hour || s.EvalGCInterval != 3*time.Minute || s.JobGCInterval != 7*time.Minute ||
		s.NodeGCInterval != 11*time.Minute || s.DeploymentGCInterval != 13*time.Minute ||
		s.RetryJoinInterval != 15*time.Second {
		t.Fatalf("server config: %+v", s)
	}
	requireEqual(t, []string{"service", "batch", "_core"}, s.EnabledSchedulers)
	requireEqual(t, []string{"10.0.0.6:5647", "10.0.0.7:5647"}, s.ServerJoin)

	cc := full.ForClient("/data", []string{"10.0.0.6:5647"}, "10.0.0.5:5646", nil)
	if cc.DataDir != "/data/client" || cc.NodeClass != "compute" || cc.NodePool != "batch-pool" ||
		cc.CPUTotalCompute != 8000 || cc.Reserved.CPU != 500 || cc.Reserved.MemoryMB != 512 ||
		cc.Reserved.DiskMB != 1024 || cc.Reserved.ReservedPorts != "22,80,8000-8010" ||
		cc.MinDynamicPort != 21000 || cc.MaxDynamicPort != 22000 || cc.GCInterval != 2*time.Minute ||
		cc.GCMaxAllocs != 40 || cc.GCDiskUsageThreshold != 85 || cc.GCInodeUsageThreshold != 75.5 ||
		cc.NetworkInterface != "eth0" || cc.Options["driver.raw_exec.enable"] != "1" || cc.LoopbackOnly {
		t.Fatalf("client config: %+v", cc)
	}
}

func TestJSONMalformedValuesHavePositionsToo(t *testing.T) {
	_, _, err := Parse("agent.json", []byte("{\n  \"ports\": {\"http\": \"web\"},\n  \"plugin\": {\"raw_exec\": {\"config\": {\"enabled\": \"yes\"}}}\n}\n"))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		`agent.json:2:21: ports.http: expected a whole number, got string "web"`,
		`agent.json:3:49: plugin.raw_exec.config.enabled: expected true or false, got string "yes"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nshould contain %q", err, want)
		}
	}
}

// Unset GC keys keep Nomad's defaults; a bad one is refused by name.
func TestServerGCSettingsDefaultToNomadsAndRejectBadValues(t *testing.T) {
	c, _, err := Parse("agent.hcl", []byte(`server { enabled = true }`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Default().Merge(c).ForServer("/data", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.EvalGCThreshold != time.Hour || s.BatchEvalGCThreshold != 24*time.Hour || s.JobGCThreshold != 4*time.Hour ||
		s.NodeGCThreshold != 24*time.Hour || s.DeploymentGCThreshold != time.Hour ||
		s.EvalGCInterval != 5*time.Minute || s.JobGCInterval != 5*time.Minute ||
		s.NodeGCInterval != 5*time.Minute || s.DeploymentGCInterval != 5*time.Minute {
		t.Fatalf("defaults: %+v", s)
	}
	_, _, err = Parse("agent.hcl", []byte("server {\n  job_gc_interval = \"soon\"\n}"))
	if err == nil || !strings.Contains(err.Error(), "job_gc_interval") || !strings.Contains(err.Error(), `"5m"`) {
		t.Fatalf("a bad interval must be refused by name with an example, got %v", err)
	}
}

func TestDockerPluginConfigReachesTheClient(t *testing.T) {
	src := `client { enabled = true }
plugin "docker" {
  config {
    allow_privileged = true
    allow_caps       = ["chown", "net_raw"]
    volumes { enabled = true }
    gc {
      image_delay = "10m"
      dangling_containers {
        enabled = false
      }
    }
  }
}
`
	c, warnings, err := Parse("agent.hcl", []byte(src))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v, warnings %q", err, warnings)
	}
	cc := c.ForClient("/tmp/d", []string{"127.0.0.1:4647"}, "127.0.0.1:4646", nil)
	got, err := docker.ParsePluginConfig(cc.PluginConfigs["docker"])
	if err != nil {
		t.Fatal(err)
	}
	if !got.AllowPrivileged || !got.VolumesEnabled || got.GC.ImageDelay != 10*time.Minute || !got.GC.Image ||
		got.GC.Dangling.Enabled || len(got.AllowCaps) != 2 {
		t.Fatalf("docker plugin config = %+v", got)
	}
}

func TestDockerPluginConfigWithAnUnknownKeyIsRefused(t *testing.T) {
	src := "server { enabled = true }\nplugin \"docker\" {\n  config {\n    gc { imag_delay = \"1m\" }\n  }\n}\n"
	c, _, err := Parse("agent.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c.DevMode = true
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), `"gc.imag_delay"`) || !strings.Contains(err.Error(), `"gc.image_delay"`) {
		t.Fatalf("Validate = %v, want the unknown key and its suggestion", err)
	}
}

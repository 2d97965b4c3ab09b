package jobspec

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

func TestParseFullJobFileCoversEveryBlock(t *testing.T) {
	got := mustParseFile(t, "full.hcl")
	assertEqual(t, wantFullJob(), got)
}

func wantFullJob() *api.Job {
	return &api.Job{
		ID:          new("full"),
		Name:        new("full-name"),
		Region:      new("eu"),
		Namespace:   new("team-a"),
		Type:        new("service"),
		Priority:    new(70),
		AllAtOnce:   new(true),
		Datacenters: []string{"dc1", "dc2"},
		NodePool:    new("pool-a"),
		Meta:        map[string]string{"owner": "ops"},
		Constraints: []*api.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		Affinities:  []*api.Affinity{{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: new(int8(-20))}},
		Spreads: []*api.Spread{{
			Attribute:    "${node.datacenter}",
			Weight:       new(int8(30)),
			SpreadTarget: []*api.SpreadTarget{{Value: "dc1", Percent: 70}, {Value: "dc2", Percent: 30}},
		}},
		Update: &api.UpdateStrategy{
			Stagger: new(time.Second), MaxParallel: new(2), HealthCheck: new("task_states"),
			MinHealthyTime: new(3 * time.Second), HealthyDeadline: new(time.Minute),
			ProgressDeadline: new(2 * time.Minute), Canary: new(1), AutoRevert: new(true), AutoPromote: new(true),
		},
		Periodic: &api.PeriodicConfig{
			Specs: []string{"*/5 * * * *", "0 1 * * *"}, ProhibitOverlap: new(true),
			TimeZone: new("Europe/Berlin"), Enabled: new(true),
		},
		ParameterizedJob: &api.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"a"}, MetaOptional: []string{"b"}},
		Reschedule:       &api.ReschedulePolicy{Attempts: new(4)},
		Migrate:          &api.MigrateStrategy{MaxParallel: new(3)},
		TaskGroups:       []*api.TaskGroup{wantFullGroup()},
	}
}

func wantFullGroup() *api.TaskGroup {
	return &api.TaskGroup{
		Name:                      new("web"),
		Count:                     new(3),
		ShutdownDelay:             new(5 * time.Second),
		MaxClientDisconnect:       new(time.Hour),
		StopAfterClientDisconnect: new(time.Minute),
		PreventRescheduleOnLost:   new(true),
		Meta:                      map[string]string{"tier.name": "front"},
		Constraints: []*api.Constraint{
			{Operand: "distinct_hosts", RTarget: "true"},
			{LTarget: "${meta.rack}", RTarget: "2", Operand: "distinct_property"},
			{LTarget: "${attr.os.version}", RTarget: "^12", Operand: "regexp"},
			{LTarget: "${attr.nomad.version}", RTarget: ">= 1.0", Operand: "version"},
		},
		Affinities: []*api.Affinity{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: new(int8(10))}},
		Spreads:    []*api.Spread{{Attribute: "${meta.rack}"}},
		Volumes: map[string]*api.VolumeRequest{"data": {
			Name: "data", Type: "host", Source: "data", ReadOnly: true, Sticky: true,
			AccessMode: "single-node-writer", AttachmentMode: "file-system", PerAlloc: true,
			MountOptions: &api.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}},
		}},
		RestartPolicy: &api.RestartPolicy{Attempts: new(5), Interval: new(time.Minute), Delay: new(time.Second),
			Mode: new("delay"), RenderTemplates: new(true)},
		Disconnect: &api.DisconnectStrategy{LostAfter: new(time.Hour), StopOnClientAfter: new(time.Minute),
			Replace: new(false), Reconcile: new("keep_original")},
		ReschedulePolicy: &api.ReschedulePolicy{Attempts: new(2), Interval: new(time.Hour), Delay: new(time.Second),
			DelayFunction: new("fibonacci"), MaxDelay: new(time.Minute), Unlimited: new(false)},
		EphemeralDisk: &api.EphemeralDisk{Sticky: new(true), Migrate: new(true), SizeMB: new(500)},
		Update:        &api.UpdateStrategy{Canary: new(2)},
		Migrate: &api.MigrateStrategy{HealthCheck: new("task_states"), MinHealthyTime: new(time.Second),
			HealthyDeadline: new(time.Minute)},
		Networks: []*api.NetworkResource{{
			Mode:          "bridge",
			Hostname:      "web",
			DynamicPorts:  []api.Port{{Label: "http", To: 8080}},
			ReservedPorts: []api.Port{{Label: "admin", Value: 9000, To: 9000, HostNetwork: "private", IgnoreCollision: true}},
			DNS:           &api.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"local"}, Options: []string{"ndots:2"}},
		}},
		Services: []*api.Service{{
			Name: "web", Tags: []string{"a"}, CanaryTags: []string{"c"}, EnableTagOverride: true,
			PortLabel: "http", AddressMode: "host", Address: "1.2.3.4", TaskName: "server",
			OnUpdate: "ignore_warnings", Provider: "nomad",
			Meta:            map[string]string{"m": "1"},
			CanaryMeta:      map[string]string{"c": "1"},
			TaggedAddresses: map[string]string{"lan": "10.0.0.1"},
			CheckRestart:    &api.CheckRestart{Limit: 2},
			Checks: []api.ServiceCheck{{
				Name: "alive", Type: "http", Path: "/health", Protocol: "https", PortLabel: "http",
				Method: "POST", Body: "{}", Interval: 10 * time.Second, Timeout: 2 * time.Second,
				InitialStatus: "passing", TLSServerName: "web.local", TLSSkipVerify: true,
				SuccessBeforePassing: 2, FailuresBeforeCritical: 3, FailuresBeforeWarning: 1, OnUpdate: "ignore",
				Header:       map[string][]string{"X-A": {"1", "2"}},
				CheckRestart: &api.CheckRestart{Limit: 3, Grace: new(time.Second), IgnoreWarnings: true},
			}},
		}},
		Tasks: []*api.Task{wantFullTask()},
	}
}

func wantFullTask() *api.Task {
	return &api.Task{
		Name: "server", Driver: "raw_exec", User: "nobody", Leader: true,
		KillTimeout: new(20 * time.Second), KillSignal: "SIGTERM", ShutdownDelay: 3 * time.Second,
		Lifecycle: &api.TaskLifecycle{Hook: "prestart", Sidecar: true},
		Config: map[string]interface{}{
			"command": "/bin/server",
			"args":    []interface{}{"-p", "${NOMAD_PORT_http}"},
			"workers": 4,
			"ratio":   0.5,
			"debug":   false,
			"labels":  map[string]interface{}{"app": "web"},
			"mount": []map[string]interface{}{
				{"type": "bind", "source": "local"},
				{"type": "tmpfs"},
			},
		},
		Env:         map[string]string{"PORT": "${NOMAD_PORT_http}"},
		Meta:        map[string]string{"k": "v"},
		Constraints: []*api.Constraint{{LTarget: "${attr.cpu.arch}", RTarget: "arm64", Operand: "!="}},
		Affinities:  []*api.Affinity{{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "="}},
		Resources: &api.Resources{
			CPU: new(200), MemoryMB: new(64), MemoryMaxMB: new(128), DiskMB: new(10),
			Devices: []*api.RequestedDevice{{
				Name:        "nvidia/gpu",
				Count:       new(uint64(2)),
				Constraints: []*api.Constraint{{LTarget: "${device.attr.memory}", RTarget: "2 GiB", Operand: ">="}},
				Affinities:  []*api.Affinity{{LTarget: "${device.model}", RTarget: "A100", Operand: "=", Weight: new(int8(50))}},
			}},
		},
		RestartPolicy: &api.RestartPolicy{Attempts: new(1)},
		LogConfig:     &api.LogConfig{MaxFiles: new(3), MaxFileSizeMB: new(5), Disabled: new(true)},
		Artifacts: []*api.TaskArtifact{{
			GetterSource: new("https://example.com/a.tgz"), RelativeDest: new("local/a"),
			GetterMode: new("file"), GetterInsecure: new(true), Chown: true,
			GetterOptions: map[string]string{"checksum": "sha256:00"},
			GetterHeaders: map[string]string{"X": "y"},
		}},
		Templates: []*api.Template{
			{
				EmbeddedTmpl: new("x={{ .X }}"), DestPath: new("local/out"), ChangeMode: new("script"),
				ChangeSignal: new("SIGUSR1"), Once: new(true), Splay: new(time.Second), Perms: new("0600"),
				Uid: new(1000), Gid: new(1000), LeftDelim: new("[["), RightDelim: new("]]"), Envvars: new(true),
				ErrMissingKey: new(true),
				ChangeScript: &api.ChangeScript{Command: new("/bin/reload"), Args: []string{"-a"},
					Timeout: new(time.Second), FailOnError: new(true)},
				Wait: &api.WaitConfig{Min: new(time.Second), Max: new(time.Minute)},
			},
			{
				// The parser fills these four, as Nomad's does.
				SourcePath: new("in.tpl"), DestPath: new("local/in"),
				ChangeMode: new("restart"), Perms: new("0644"), Splay: new(5 * time.Second), ErrMissingKey: new(false),
			},
		},
		DispatchPayload: &api.DispatchPayloadConfig{File: "input.json"},
		VolumeMounts: []*api.VolumeMount{{Volume: new("data"), Destination: new("/data"), ReadOnly: new(true),
			PropagationMode: new("host-to-task"), SELinuxLabel: new("z")}},
		Services: []*api.Service{{Name: "task-svc"}},
	}
}

func TestParseDoesNotCanonicalize(t *testing.T) {
	job := mustParse(t, inTask(`driver = "raw_exec"`))
	want := &api.Job{
		ID:   new("j"),
		Name: new("j"),
		TaskGroups: []*api.TaskGroup{{
			Name:  new("g"),
			Tasks: []*api.Task{{Name: "t", Driver: "raw_exec"}},
		}},
	}
	assertEqual(t, want, job)
}

func TestParseSetsJobIDAndNameFromTheLabelUnlessGiven(t *testing.T) {
	cases := []struct {
		name             string
		src              string
		wantID, wantName string
	}{
		{"the label is the ID and the name", `job "a" {}`, "a", "a"},
		{"a name argument overrides the name only", `job "a" { name = "b" }`, "a", "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mustParse(t, tc.src)
			if *job.ID != tc.wantID || *job.Name != tc.wantName {
				t.Errorf("ID, Name = %q, %q; want %q, %q", *job.ID, *job.Name, tc.wantID, tc.wantName)
			}
		})
	}
}

func TestParseSplitsPortsIntoReservedAndDynamic(t *testing.T) {
	job := mustParse(t, inGroup(`
		network {
			port "db" { static = 6379 }
			port "http" {}
			port "metrics" { to = 9090 }
		}`))
	n := job.TaskGroups[0].Networks[0]
	assertEqual(t, []api.Port{{Label: "db", Value: 6379}}, n.ReservedPorts)
	assertEqual(t, []api.Port{{Label: "http"}, {Label: "metrics", To: 9090}}, n.DynamicPorts)
}

func TestParseSetsSpecTypeForTheSingleCronSpec(t *testing.T) {
	job := mustParse(t, `job "j" {
		type = "batch"
		periodic { cron = "@daily" }
	}`)
	want := &api.PeriodicConfig{Spec: new("@daily"), SpecType: new("cron")}
	assertEqual(t, want, job.Periodic)
}

func TestParseAcceptsMetaAndEnvAsBlockOrArgument(t *testing.T) {
	cases := []struct {
		name string
		body string
	}{
		{"as blocks", `meta { a = "1" }
			env { A = 1 }`},
		{"as arguments", `meta = { a = "1" }
			env = { A = 1 }`},
		{"as arguments with quoted keys", `meta = { "a" = "1" }
			env = { "A" = 1 }`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mustParse(t, inTask(tc.body))
			task := job.TaskGroups[0].Tasks[0]
			assertEqual(t, map[string]string{"a": "1"}, task.Meta)
			assertEqual(t, map[string]string{"A": "1"}, task.Env)
		})
	}
}

func TestParseAcceptsDotsInMetaKeysWrittenAsArgument(t *testing.T) {
	job := mustParse(t, `job "j" { meta = { "team.name" = "ops", "x-y" = "z" } }`)
	assertEqual(t, map[string]string{"team.name": "ops", "x-y": "z"}, job.Meta)
}

func TestParseAcceptsDurationsAsStrings(t *testing.T) {
	cases := []struct {
		text string
		want time.Duration
	}{
		{`"30s"`, 30 * time.Second},
		{`"1h30m"`, 90 * time.Minute},
		{`"250ms"`, 250 * time.Millisecond},
		{`"0s"`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			job := mustParse(t, inTask(`kill_timeout = `+tc.text))
			if got := *job.TaskGroups[0].Tasks[0].KillTimeout; got != tc.want {
				t.Errorf("kill_timeout = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseTreatsNullAsUnset(t *testing.T) {
	job := mustParse(t, `job "j" { priority = null }`)
	if job.Priority != nil {
		t.Errorf("Priority = %v, want nil", *job.Priority)
	}
}

func TestParseReadsTheFileWhenNoBodyIsGiven(t *testing.T) {
	job, err := ParseWithConfig(&ParseConfig{Path: "../examples/web.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	if *job.ID != "web" {
		t.Errorf("ID = %q, want web", *job.ID)
	}
}

func TestParseReadsFromAReader(t *testing.T) {
	job, err := Parse("j.hcl", strings.NewReader(`job "from-reader" {}`))
	if err != nil {
		t.Fatal(err)
	}
	if *job.ID != "from-reader" {
		t.Errorf("ID = %q", *job.ID)
	}
}

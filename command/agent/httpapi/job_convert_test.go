package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

func ptr[T any](v T) *T { return &v }

// requireEqual compares two jobs and prints both as JSON on a mismatch,
// which is far easier to read than %+v of nested structs.
func requireEqual(t *testing.T, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", "  ")
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("mismatch\nwant: %s\n got: %s", w, g)
	}
}

// fullAPIJob sets every field the api job has that structs has too, each
// to a value that differs from its default, so a field the conversion
// forgets shows up as a zero.
func fullAPIJob() *api.Job {
	j := &api.Job{
		Region: ptr("eu"), Namespace: ptr("prod"), ID: ptr("web"), Name: ptr("web-name"),
		Type: ptr("service"), Priority: ptr(70), AllAtOnce: ptr(true),
		Datacenters: []string{"dc1", "dc2"}, NodePool: ptr("pool-a"),
		Constraints: []*api.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		Affinities:  []*api.Affinity{{LTarget: "${node.class}", RTarget: "big", Operand: "=", Weight: ptr(int8(50))}},
		Spreads:     []*api.Spread{{Attribute: "${node.datacenter}", Weight: ptr(int8(40)), SpreadTarget: []*api.SpreadTarget{{Value: "dc1", Percent: 60}}}},
		Update: &api.UpdateStrategy{
			Stagger: ptr(11 * time.Second), MaxParallel: ptr(3), HealthCheck: ptr("task_states"),
			MinHealthyTime: ptr(12 * time.Second), HealthyDeadline: ptr(13 * time.Minute),
			ProgressDeadline: ptr(14 * time.Minute), Canary: ptr(2), AutoRevert: ptr(true), AutoPromote: ptr(true),
		},
		Periodic: &api.PeriodicConfig{Enabled: ptr(true), Spec: ptr("*/5 * * * *"), Specs: []string{"0 1 * * *"},
			SpecType: ptr("cron"), ProhibitOverlap: ptr(true), TimeZone: ptr("Europe/Paris")},
		ParameterizedJob: &api.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"a"}, MetaOptional: []string{"b"}},
		Meta:             map[string]string{"owner": "team"},
		Stop:             ptr(true), ParentID: ptr("parent"), Dispatched: true, Payload: []byte("data"), DispatchIdempotencyToken: ptr("tok"),
		Status: ptr("running"), StatusDescription: ptr("ok"), Stable: ptr(true), Version: ptr(uint64(4)),
		SubmitTime: ptr(int64(1000)), CreateIndex: ptr(uint64(5)), ModifyIndex: ptr(uint64(6)), JobModifyIndex: ptr(uint64(7)),
		TaskGroups: []*api.TaskGroup{{
			Name: ptr("g"), Count: ptr(3),
			Constraints:      []*api.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "!="}},
			Affinities:       []*api.Affinity{{LTarget: "${meta.a}", RTarget: "b", Operand: "=", Weight: ptr(int8(-20))}},
			Spreads:          []*api.Spread{{Attribute: "${meta.rack}", Weight: ptr(int8(10)), SpreadTarget: []*api.SpreadTarget{{Value: "r1", Percent: 50}}}},
			Volumes:          map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "src", ReadOnly: true}},
			RestartPolicy:    &api.RestartPolicy{Interval: ptr(time.Hour), Attempts: ptr(4), Delay: ptr(time.Second), Mode: ptr("delay"), RenderTemplates: ptr(true)},
			Disconnect:       &api.DisconnectStrategy{LostAfter: ptr(time.Hour), Replace: ptr(true), Reconcile: ptr("keep_original"), StopOnClientAfter: ptr(time.Minute)},
			ReschedulePolicy: &api.ReschedulePolicy{Attempts: ptr(2), Interval: ptr(time.Hour), Delay: ptr(time.Minute), DelayFunction: ptr("fibonacci"), MaxDelay: ptr(2 * time.Hour), Unlimited: ptr(true)},
			EphemeralDisk:    &api.EphemeralDisk{Sticky: ptr(true), Migrate: ptr(true), SizeMB: ptr(500)},
			Update: &api.UpdateStrategy{Stagger: ptr(time.Second), MaxParallel: ptr(2), HealthCheck: ptr("manual"),
				MinHealthyTime: ptr(2 * time.Second), HealthyDeadline: ptr(3 * time.Minute), ProgressDeadline: ptr(4 * time.Minute),
				Canary: ptr(1), AutoRevert: ptr(true), AutoPromote: ptr(true)},
			Migrate: &api.MigrateStrategy{MaxParallel: ptr(2), HealthCheck: ptr("checks"), MinHealthyTime: ptr(time.Second), HealthyDeadline: ptr(time.Minute)},
			Networks: []*api.NetworkResource{{
				Mode: "bridge", Device: "eth0", CIDR: "10.0.0.0/8", IP: "10.0.0.1", Hostname: "h", MBits: ptr(10),
				DNS:           &api.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"local"}, Options: []string{"ndots:2"}},
				ReservedPorts: []api.Port{{Label: "http", Value: 8080, To: 80, HostNetwork: "public"}},
				DynamicPorts:  []api.Port{{Label: "admin", Value: 23456, To: 9000, HostNetwork: "default"}},
			}},
			Meta: map[string]string{"g": "1"},
			Services: []*api.Service{{Name: "svc", TaskName: "t", PortLabel: "http", Provider: "nomad", Tags: []string{"a"}, Meta: map[string]string{"m": "1"},
				Checks: []api.ServiceCheck{{Name: "gc", Type: "tcp", Command: "c", Args: []string{"a"}, Path: "/", Protocol: "http", PortLabel: "http", Interval: time.Second, Timeout: time.Second, Method: "HEAD"}}}},
			ShutdownDelay:             ptr(3 * time.Second),
			MaxClientDisconnect:       ptr(time.Hour),
			StopAfterClientDisconnect: ptr(2 * time.Minute),
			PreventRescheduleOnLost:   ptr(true),
			Scaling: &api.ScalingPolicy{Min: ptr(int64(1)), Max: ptr(int64(5)), Enabled: ptr(true), Type: "horizontal",
				Policy: map[string]any{"cooldown": "1m"}, Target: map[string]string{"Group": "g"}},
			Tasks: []*api.Task{{
				Name: "t", Driver: "raw_exec", User: "nobody",
				Lifecycle:   &api.TaskLifecycle{Hook: "prestart", Sidecar: true},
				Config:      map[string]interface{}{"command": "/bin/sleep", "args": []interface{}{"10"}},
				Constraints: []*api.Constraint{{LTarget: "${attr.os}", RTarget: "linux", Operand: "="}},
				Affinities:  []*api.Affinity{{LTarget: "${attr.x}", RTarget: "y", Operand: "=", Weight: ptr(int8(5))}},
				Env:         map[string]string{"A": "1"},
				Services: []*api.Service{{Name: "tsvc", TaskName: "t", PortLabel: "admin", Provider: "nomad", Tags: []string{"t"}, Meta: map[string]string{"k": "v"}, Checks: []api.ServiceCheck{{
					Name: "c", Type: "http", Command: "cmd", Args: []string{"x"}, Path: "/health", Protocol: "https",
					PortLabel: "admin", Interval: 10 * time.Second, Timeout: 2 * time.Second, Method: "GET",
				}}}},
				Resources: &api.Resources{CPU: ptr(250), Cores: ptr(1), MemoryMB: ptr(128), MemoryMaxMB: ptr(256), DiskMB: ptr(50), Networks: []*api.NetworkResource{{
					Mode: "host", Device: "eth1", CIDR: "192.168.0.0/16", IP: "192.168.0.2", Hostname: "th", MBits: ptr(1),
					DNS:           &api.DNSConfig{Servers: []string{"8.8.8.8"}, Searches: []string{"s"}, Options: []string{"o"}},
					ReservedPorts: []api.Port{{Label: "p1", Value: 7000, To: 70, HostNetwork: "n"}},
					DynamicPorts:  []api.Port{{Label: "p2", Value: 7001, To: 71, HostNetwork: "n"}},
				}}},
				RestartPolicy: &api.RestartPolicy{Attempts: ptr(1), Mode: ptr("fail"), Interval: ptr(time.Minute), Delay: ptr(time.Second), RenderTemplates: ptr(true)},
				Meta:          map[string]string{"t": "1"},
				KillTimeout:   ptr(9 * time.Second),
				LogConfig:     &api.LogConfig{MaxFiles: ptr(3), MaxFileSizeMB: ptr(4), Disabled: ptr(true)},
				Artifacts:     []*api.TaskArtifact{{GetterSource: ptr("https://x/y.tgz"), GetterOptions: map[string]string{"checksum": "md5:1"}, GetterMode: ptr("any"), RelativeDest: ptr("local/")}},
				Templates:     []*api.Template{{SourcePath: ptr("a.tpl"), DestPath: ptr("local/a"), EmbeddedTmpl: ptr("{{ key }}"), ChangeMode: ptr("signal"), ChangeSignal: ptr("SIGHUP"), Perms: ptr("0600"), Envvars: ptr(true)}},
				Leader:        true, ShutdownDelay: 4 * time.Second, KillSignal: "SIGTERM",
			}},
		}},
	}
	addKeptAsDataAPI(j)
	return j
}

// addKeptAsDataAPI sets the fields Drover keeps as data without acting on
// them; addKeptAsDataStructs sets what they convert to.
func addKeptAsDataAPI(j *api.Job) {
	tg := j.TaskGroups[0]
	task := tg.Tasks[0]
	v := tg.Volumes["data"]
	v.Sticky, v.AccessMode, v.AttachmentMode, v.PerAlloc = true, "single-node-writer", "file-system", true
	v.MountOptions = &api.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}}
	for _, svc := range []*api.Service{tg.Services[0], task.Services[0]} {
		svc.CanaryTags, svc.EnableTagOverride, svc.AddressMode, svc.Address = []string{"canary"}, true, "host", "10.1.1.1"
		svc.CheckRestart = &api.CheckRestart{Limit: 3, Grace: ptr(time.Minute), IgnoreWarnings: true}
		svc.CanaryMeta, svc.TaggedAddresses = map[string]string{"c": "1"}, map[string]string{"lan": "10.0.0.1"}
		svc.OnUpdate, svc.Cluster, svc.Kind = "ignore", "east", "api-gateway"
		c := &svc.Checks[0]
		c.Expose, c.AddressMode, c.Advertise, c.InitialStatus, c.Notes = true, "driver", "10.2.2.2", "passing", "n"
		c.TLSServerName, c.TLSSkipVerify, c.Header, c.Body = "tls", true, map[string][]string{"X-A": {"1", "2"}}, "{}"
		c.CheckRestart = &api.CheckRestart{Limit: 2, Grace: ptr(time.Second), IgnoreWarnings: true}
		c.GRPCService, c.GRPCUseTLS, c.TaskName = "grpc.health", true, "t"
		c.SuccessBeforePassing, c.FailuresBeforeCritical, c.FailuresBeforeWarning, c.OnUpdate = 2, 3, 1, "ignore_warnings"
	}
	task.Kind = "connect-proxy:svc"
	task.DispatchPayload = &api.DispatchPayloadConfig{File: "input.json"}
	task.VolumeMounts = []*api.VolumeMount{{Volume: ptr("data"), Destination: ptr("/data"), ReadOnly: ptr(true), PropagationMode: ptr("host-to-task"), SELinuxLabel: ptr("z")}}
	task.Resources.Devices = []*api.RequestedDevice{{Name: "nvidia/gpu", Count: ptr(uint64(2)),
		Constraints: []*api.Constraint{{LTarget: "${device.attr.memory}", RTarget: "2 GiB", Operand: ">="}},
		Affinities:  []*api.Affinity{{LTarget: "${device.model}", RTarget: "Tesla", Operand: "=", Weight: ptr(int8(50))}}}}
	a := task.Artifacts[0]
	a.GetterHeaders, a.GetterInsecure, a.Chown = map[string]string{"Auth": "x"}, ptr(true), true
	tm := task.Templates[0]
	tm.ChangeScript = &api.ChangeScript{Command: ptr("/bin/reload"), Args: []string{"-f"}, Timeout: ptr(3 * time.Second), FailOnError: ptr(true)}
	tm.Once, tm.Splay, tm.Uid, tm.Gid = ptr(true), ptr(7*time.Second), ptr(1000), ptr(1001)
	tm.LeftDelim, tm.RightDelim, tm.ErrMissingKey = ptr("[["), ptr("]]"), ptr(true)
	tm.Wait = &api.WaitConfig{Min: ptr(time.Second), Max: ptr(time.Minute)}
}

func addKeptAsDataStructs(j *structs.Job) {
	tg := j.TaskGroups[0]
	task := tg.Tasks[0]
	v := tg.Volumes["data"]
	v.Sticky, v.AccessMode, v.AttachmentMode, v.PerAlloc = true, "single-node-writer", "file-system", true
	v.MountOptions = &structs.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}}
	for _, svc := range []*structs.Service{tg.Services[0], task.Services[0]} {
		svc.CanaryTags, svc.EnableTagOverride, svc.AddressMode, svc.Address = []string{"canary"}, true, "host", "10.1.1.1"
		svc.CheckRestart = &structs.CheckRestart{Limit: 3, Grace: time.Minute, IgnoreWarnings: true}
		svc.CanaryMeta, svc.TaggedAddresses = map[string]string{"c": "1"}, map[string]string{"lan": "10.0.0.1"}
		svc.OnUpdate, svc.Cluster, svc.Kind = "ignore", "east", "api-gateway"
		c := svc.Checks[0]
		c.Expose, c.AddressMode, c.Advertise, c.InitialStatus, c.Notes = true, "driver", "10.2.2.2", "passing", "n"
		c.TLSServerName, c.TLSSkipVerify, c.Header, c.Body = "tls", true, map[string][]string{"X-A": {"1", "2"}}, "{}"
		c.CheckRestart = &structs.CheckRestart{Limit: 2, Grace: time.Second, IgnoreWarnings: true}
		c.GRPCService, c.GRPCUseTLS, c.TaskName = "grpc.health", true, "t"
		c.SuccessBeforePassing, c.FailuresBeforeCritical, c.FailuresBeforeWarning, c.OnUpdate = 2, 3, 1, "ignore_warnings"
	}
	task.Kind = "connect-proxy:svc"
	task.DispatchPayload = &structs.DispatchPayloadConfig{File: "input.json"}
	task.VolumeMounts = []*structs.VolumeMount{{Volume: "data", Destination: "/data", ReadOnly: true, PropagationMode: "host-to-task", SELinuxLabel: "z"}}
	task.Resources.Devices = []*structs.RequestedDevice{{Name: "nvidia/gpu", Count: 2,
		Constraints: []*structs.Constraint{{LTarget: "${device.attr.memory}", RTarget: "2 GiB", Operand: ">="}},
		Affinities:  []*structs.Affinity{{LTarget: "${device.model}", RTarget: "Tesla", Operand: "=", Weight: 50}}}}
	a := task.Artifacts[0]
	a.GetterHeaders, a.GetterInsecure, a.Chown = map[string]string{"Auth": "x"}, true, true
	tm := task.Templates[0]
	tm.ChangeScript = &structs.ChangeScript{Command: "/bin/reload", Args: []string{"-f"}, Timeout: 3 * time.Second, FailOnError: true}
	tm.Once, tm.Splay, tm.Uid, tm.Gid = true, 7*time.Second, ptr(1000), ptr(1001)
	tm.LeftDelim, tm.RightDelim, tm.ErrMissingKey = "[[", "]]", true
	tm.Wait = &structs.WaitConfig{Min: ptr(time.Second), Max: ptr(time.Minute)}
}

func TestApiJobToStructJobCopiesEveryField(t *testing.T) {
	got := ApiJobToStructJob(fullAPIJob())
	want := &structs.Job{
		Stop: true, Region: "eu", Namespace: "prod", ID: "web", ParentID: "parent", Name: "web-name",
		Type: "service", Priority: 70, AllAtOnce: true, Datacenters: []string{"dc1", "dc2"}, NodePool: "pool-a",
		Constraints: []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		Affinities:  []*structs.Affinity{{LTarget: "${node.class}", RTarget: "big", Operand: "=", Weight: 50}},
		Spreads:     []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 40, SpreadTarget: []*structs.SpreadTarget{{Value: "dc1", Percent: 60}}}},
		Update: structs.UpdateStrategy{Stagger: 11 * time.Second, MaxParallel: 3, HealthCheck: "task_states",
			MinHealthyTime: 12 * time.Second, HealthyDeadline: 13 * time.Minute, ProgressDeadline: 14 * time.Minute,
			AutoRevert: true, AutoPromote: true, Canary: 2},
		Periodic: &structs.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *", Specs: []string{"0 1 * * *"},
			SpecType: "cron", ProhibitOverlap: true, TimeZone: "Europe/Paris"},
		ParameterizedJob: &structs.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"a"}, MetaOptional: []string{"b"}},
		Dispatched:       true, Payload: []byte("data"), DispatchIdempotencyToken: "tok", Meta: map[string]string{"owner": "team"},
		Status: "running", StatusDescription: "ok", Stable: true, Version: 4, SubmitTime: 1000,
		CreateIndex: 5, ModifyIndex: 6, JobModifyIndex: 7,
		TaskGroups: []*structs.TaskGroup{{
			Name: "g", Count: 3,
			Update: &structs.UpdateStrategy{Stagger: time.Second, MaxParallel: 2, HealthCheck: "manual",
				MinHealthyTime: 2 * time.Second, HealthyDeadline: 3 * time.Minute, ProgressDeadline: 4 * time.Minute,
				AutoRevert: true, AutoPromote: true, Canary: 1},
			Migrate:       &structs.MigrateStrategy{MaxParallel: 2, HealthCheck: "checks", MinHealthyTime: time.Second, HealthyDeadline: time.Minute},
			Constraints:   []*structs.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "!="}},
			RestartPolicy: &structs.RestartPolicy{Attempts: 4, Interval: time.Hour, Delay: time.Second, Mode: "delay", RenderTemplates: true},
			EphemeralDisk: &structs.EphemeralDisk{Sticky: true, SizeMB: 500, Migrate: true},
			Meta:          map[string]string{"g": "1"},
			ReschedulePolicy: &structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour, Delay: time.Minute,
				DelayFunction: "fibonacci", MaxDelay: 2 * time.Hour, Unlimited: true},
			Affinities: []*structs.Affinity{{LTarget: "${meta.a}", RTarget: "b", Operand: "=", Weight: -20}},
			Spreads:    []*structs.Spread{{Attribute: "${meta.rack}", Weight: 10, SpreadTarget: []*structs.SpreadTarget{{Value: "r1", Percent: 50}}}},
			Networks: structs.Networks{{
				Mode: "bridge", Device: "eth0", CIDR: "10.0.0.0/8", IP: "10.0.0.1", Hostname: "h", MBits: 10,
				DNS:           &structs.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"local"}, Options: []string{"ndots:2"}},
				ReservedPorts: []structs.Port{{Label: "http", Value: 8080, To: 80, HostNetwork: "public"}},
				DynamicPorts:  []structs.Port{{Label: "admin", Value: 23456, To: 9000, HostNetwork: "default"}},
			}},
			Services: []*structs.Service{{Name: "svc", TaskName: "t", PortLabel: "http", Provider: "nomad", Tags: []string{"a"}, Meta: map[string]string{"m": "1"},
				Checks: []*structs.ServiceCheck{{Name: "gc", Type: "tcp", Command: "c", Args: []string{"a"}, Path: "/", Protocol: "http", PortLabel: "http", Interval: time.Second, Timeout: time.Second, Method: "HEAD"}}}},
			Volumes:                   map[string]*structs.VolumeRequest{"data": {Name: "data", Type: "host", Source: "src", ReadOnly: true}},
			ShutdownDelay:             ptr(3 * time.Second),
			StopAfterClientDisconnect: ptr(2 * time.Minute),
			MaxClientDisconnect:       ptr(time.Hour),
			PreventRescheduleOnLost:   true,
			Disconnect:                &structs.DisconnectStrategy{LostAfter: time.Hour, Replace: ptr(true), Reconcile: "keep_original", StopOnClientAfter: ptr(time.Minute)},
			Scaling: &structs.ScalingPolicy{Min: 1, Max: 5, Enabled: true, Type: "horizontal",
				Policy: map[string]any{"cooldown": "1m"}, Target: map[string]string{"Group": "g"}},
			Tasks: []*structs.Task{{
				Name: "t", Driver: "raw_exec", User: "nobody",
				Config: map[string]any{"command": "/bin/sleep", "args": []any{"10"}},
				Env:    map[string]string{"A": "1"},
				Services: []*structs.Service{{Name: "tsvc", TaskName: "t", PortLabel: "admin", Provider: "nomad", Tags: []string{"t"}, Meta: map[string]string{"k": "v"}, Checks: []*structs.ServiceCheck{{
					Name: "c", Type: "http", Command: "cmd", Args: []string{"x"}, Path: "/health", Protocol: "https",
					PortLabel: "admin", Interval: 10 * time.Second, Timeout: 2 * time.Second, Method: "GET",
				}}}},
				Constraints: []*structs.Constraint{{LTarget: "${attr.os}", RTarget: "linux", Operand: "="}},
				Affinities:  []*structs.Affinity{{LTarget: "${attr.x}", RTarget: "y", Operand: "=", Weight: 5}},
				Resources: &structs.Resources{CPU: 250, Cores: 1, MemoryMB: 128, MemoryMaxMB: 256, DiskMB: 50, Networks: structs.Networks{{
					Mode: "host", Device: "eth1", CIDR: "192.168.0.0/16", IP: "192.168.0.2", Hostname: "th", MBits: 1,
					DNS:           &structs.DNSConfig{Servers: []string{"8.8.8.8"}, Searches: []string{"s"}, Options: []string{"o"}},
					ReservedPorts: []structs.Port{{Label: "p1", Value: 7000, To: 70, HostNetwork: "n"}},
					DynamicPorts:  []structs.Port{{Label: "p2", Value: 7001, To: 71, HostNetwork: "n"}},
				}}},
				RestartPolicy: &structs.RestartPolicy{Attempts: 1, Interval: time.Minute, Delay: time.Second, Mode: "fail", RenderTemplates: true},
				Meta:          map[string]string{"t": "1"},
				KillTimeout:   9 * time.Second,
				LogConfig:     &structs.LogConfig{MaxFiles: 3, MaxFileSizeMB: 4, Disabled: true},
				Artifacts:     []*structs.TaskArtifact{{GetterSource: "https://x/y.tgz", GetterOptions: map[string]string{"checksum": "md5:1"}, GetterMode: "any", RelativeDest: "local/"}},
				Templates:     []*structs.Template{{SourcePath: "a.tpl", DestPath: "local/a", EmbeddedTmpl: "{{ key }}", ChangeMode: "signal", ChangeSignal: "SIGHUP", Perms: "0600", Envvars: true}},
				Leader:        true, ShutdownDelay: 4 * time.Second, KillSignal: "SIGTERM",
				Lifecycle: &structs.TaskLifecycleConfig{Hook: "prestart", Sidecar: true},
			}},
		}},
	}
	addKeptAsDataStructs(want)
	requireEqual(t, want, got)
}

// structsOnly are structs fields no api field maps to; every other field
// must be set by converting fullAPIJob. A new field added to structs fails
// this test until the conversion (or this list) learns about it.
var structsOnly = map[string]bool{
	"Job.TaskGroups.Tasks.Resources.IOPS": true,
}

func TestConvertedJobHasNoForgottenField(t *testing.T) {
	job := ApiJobToStructJob(fullAPIJob())
	var missing []string
	walkZero(reflect.ValueOf(job).Elem(), "Job", &missing)
	if len(missing) > 0 {
		t.Fatalf("fields left zero by the conversion (add them to ApiJobToStructJob, or to structsOnly if no api field exists):\n  %s",
			strings.Join(missing, "\n  "))
	}
}

// walkZero records the path of every zero field under v. Lists and maps
// are walked through their first element; the path drops indexes.
func walkZero(v reflect.Value, path string, missing *[]string) {
	if structsOnly[path] {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			*missing = append(*missing, path)
			return
		}
		walkZero(v.Elem(), path, missing)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			walkZero(v.Field(i), path+"."+v.Type().Field(i).Name, missing)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			*missing = append(*missing, path)
			return
		}
		if v.Type().Elem().Kind() == reflect.Struct || v.Type().Elem().Kind() == reflect.Pointer {
			walkZero(v.Index(0), path, missing)
		}
	case reflect.Map:
		if v.Len() == 0 {
			*missing = append(*missing, path)
			return
		}
		if ek := v.Type().Elem().Kind(); ek == reflect.Struct || ek == reflect.Pointer {
			walkZero(v.MapIndex(v.MapKeys()[0]), path, missing)
		}
	default:
		if v.IsZero() {
			*missing = append(*missing, path)
		}
	}
}

func TestLegacyGroupFieldsFoldIntoDisconnect(t *testing.T) {
	job := &api.Job{ID: ptr("j"), TaskGroups: []*api.TaskGroup{{
		Name: ptr("g"), PreventRescheduleOnLost: ptr(true), StopAfterClientDisconnect: ptr(time.Minute),
		Tasks: []*api.Task{{Name: "t", Driver: "mock_driver"}},
	}}}
	job.Canonicalize()
	got := ApiJobToStructJob(job)
	got.Canonicalize()
	d := got.TaskGroups[0].Disconnect
	if d == nil || d.ShouldReplace() || d.StopOnClientAfter == nil || *d.StopOnClientAfter != time.Minute {
		t.Fatalf("legacy fields not folded into the disconnect block: %+v", d)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("converted job invalid: %v", err)
	}
}

func TestLegacyLogEnabledFalseMeansDisabled(t *testing.T) {
	job := &api.Job{ID: ptr("j"), TaskGroups: []*api.TaskGroup{{Name: ptr("g"),
		Tasks: []*api.Task{{Name: "t", Driver: "mock_driver", LogConfig: &api.LogConfig{Enabled: ptr(false)}}}}}}
	if got := ApiJobToStructJob(job); !got.TaskGroups[0].Tasks[0].LogConfig.Disabled {
		t.Fatal("logs { enabled = false } must disable logs")
	}
}

func TestCanonicalizedMinimalJobConvertsToAValidJob(t *testing.T) {
	job := &api.Job{ID: ptr("min"), Datacenters: []string{"dc1"}, TaskGroups: []*api.TaskGroup{{
		Name: ptr("g"), Tasks: []*api.Task{{Name: "t", Driver: "mock_driver", Config: map[string]any{"run_for": "1s"}}},
	}}}
	job.Canonicalize()
	got := ApiJobToStructJob(job)
	got.Canonicalize()
	if err := got.Validate(); err != nil {
		t.Fatalf("converted job invalid: %v", err)
	}
	tg := got.TaskGroups[0]
	if got.Name != "min" || got.Type != "service" || got.Priority != 50 || got.Namespace != "default" ||
		tg.Count != 1 || tg.RestartPolicy == nil || tg.ReschedulePolicy == nil || tg.Tasks[0].KillTimeout != 5*time.Second ||
		tg.Tasks[0].Resources.CPU != 100 || tg.Tasks[0].Resources.MemoryMB != 300 {
		t.Fatalf("defaults lost in conversion: %+v %+v", got, tg)
	}
}

// TestCopyOfAFullJobSharesNothing checks structs.Job.Copy on a job with
// every field set: no pointer, slice or map of the copy may alias the
// original's, or a change to a copy (as the servers make) would leak into
// stored state.
func TestCopyOfAFullJobSharesNothing(t *testing.T) {
	job := ApiJobToStructJob(fullAPIJob())
	cp := job.Copy()
	requireEqual(t, job, cp)
	var shared []string
	walkShared(reflect.ValueOf(job), reflect.ValueOf(cp), "Job", &shared)
	if len(shared) > 0 {
		t.Fatalf("Copy shares these with the original:\n  %s", strings.Join(shared, "\n  "))
	}
}

func walkShared(a, b reflect.Value, path string, shared *[]string) {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			*shared = append(*shared, path)
			return
		}
		walkShared(a.Elem(), b.Elem(), path, shared)
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() {
			walkShared(a.Elem(), b.Elem(), path, shared)
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			walkShared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, shared)
		}
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() {
			*shared = append(*shared, path)
			return
		}
		for i := 0; i < a.Len() && i < b.Len(); i++ {
			walkShared(a.Index(i), b.Index(i), path, shared)
		}
	case reflect.Map:
		if a.Len() == 0 || b.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() {
			*shared = append(*shared, path)
			return
		}
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				walkShared(a.MapIndex(k), bv, path, shared)
			}
		}
	}
}

// TestDiffOfKeptAsDataFields checks that the plan diff sees a change to a
// field Drover keeps as data, as Nomad's does.
func TestDiffOfKeptAsDataFields(t *testing.T) {
	old := ApiJobToStructJob(fullAPIJob())
	changed := old.Copy()
	task := changed.TaskGroups[0].Tasks[0]
	task.Templates[0].Wait.Max = ptr(2 * time.Minute)
	task.Services[0].Checks[0].Header["X-A"] = []string{"3"}
	changed.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination = "/other"
	for _, contextual := range []bool{false, true} {
		d, err := old.Diff(changed, contextual)
		if err != nil || d.Type != structs.DiffTypeEdited || len(d.TaskGroups) != 1 || d.TaskGroups[0].Type != structs.DiffTypeEdited ||
			len(d.TaskGroups[0].Tasks) != 1 || d.TaskGroups[0].Tasks[0].Type != structs.DiffTypeEdited {
			t.Fatalf("diff (contextual %v): %v %+v", contextual, err, d)
		}
		if !contextual && len(d.TaskGroups[0].Tasks[0].Objects) < 3 {
			t.Fatalf("task diff objects: %+v", d.TaskGroups[0].Tasks[0].Objects)
		}
	}
	same, err := old.Diff(old.Copy(), false)
	if err != nil || same.Type != structs.DiffTypeNone {
		t.Fatalf("diff of a copy: %v %+v", err, same)
	}
}

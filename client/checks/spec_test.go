package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func checksAlloc() *structs.Allocation {
	tg := &structs.TaskGroup{
		Name: "web",
		Services: []*structs.Service{{Name: "front", PortLabel: "http", Checks: []*structs.ServiceCheck{
			{Name: "alive", Type: "http", Path: "/health", Interval: 5 * time.Second, Timeout: time.Second},
			{Name: "admin", Type: "tcp", PortLabel: "admin", Interval: 100 * time.Millisecond, OnUpdate: "ignore"},
			{Name: "script", Type: "script", Command: "/bin/true", TaskName: "app", InitialStatus: "passing"},
		}}},
		Tasks: []*structs.Task{{Name: "app", Services: []*structs.Service{{Name: "app-svc", PortLabel: "9999",
			CheckRestart: &structs.CheckRestart{Limit: 3}, Checks: []*structs.ServiceCheck{
				{Type: "tcp", OnUpdate: "ignore_warnings"},
				{Name: "own", Type: "tcp", CheckRestart: &structs.CheckRestart{Limit: 1}},
			}}}}},
	}
	return &structs.Allocation{ID: "a1", TaskGroup: "web", Job: &structs.Job{TaskGroups: []*structs.TaskGroup{tg}},
		AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
			Ports:    structs.AllocatedPorts{{Label: "http", Value: 25000, HostIP: "10.0.0.5"}},
			Networks: structs.Networks{{IP: "10.0.0.6", DynamicPorts: []structs.Port{{Label: "admin", Value: 26000}}}},
		}}}
}

func TestSpecsForResolvesEveryCheckOfTheAlloc(t *testing.T) {
	specs := SpecsFor(checksAlloc(), "192.168.1.1")
	if len(specs) != 5 {
		t.Fatalf("got %d specs, want 5", len(specs))
	}
	byName := map[string]Spec{}
	ids := map[string]bool{}
	for _, s := range specs {
		byName[s.Name] = s
		if len(s.ID) != 32 || ids[s.ID] {
			t.Fatalf("check %q has ID %q: want 32 hex digits, unique", s.Name, s.ID)
		}
		ids[s.ID] = true
	}
	alive := byName["alive"]
	if alive.Address != "10.0.0.5:25000" || alive.Group != "web" || alive.Task != "" || alive.Service != "front" ||
		alive.Mode != ModeHealthiness || alive.Interval != 5*time.Second || alive.Timeout != time.Second || alive.InitialStatus != StatusPending {
		t.Fatalf("alive: %+v", alive)
	}
	if admin := byName["admin"]; admin.Address != "10.0.0.6:26000" || admin.Mode != ModeReadiness || admin.Interval != MinInterval || admin.Timeout != DefaultTimeout {
		t.Fatalf("admin (network port, readiness, raised interval, default timeout): %+v", admin)
	}
	if script := byName["script"]; script.Task != "app" || script.InitialStatus != StatusSuccess || script.Address != "" {
		t.Fatalf("script of a group service names its task: %+v", script)
	}
	unnamed := byName[`service: "app-svc" check`]
	if unnamed.Task != "app" || unnamed.Address != "10.0.0.6:9999" || !unnamed.IgnoreWarnings || unnamed.Restart == nil || unnamed.Restart.Limit != 3 {
		t.Fatalf("task service check (numeric port on the alloc's IP, service's check_restart): %+v", unnamed)
	}
	if own := byName["own"]; own.Restart.Limit != 1 {
		t.Fatalf("a check's own check_restart wins: %+v", own.Restart)
	}
	again := SpecsFor(checksAlloc(), "192.168.1.1")
	for i := range specs {
		if again[i].ID != specs[i].ID {
			t.Fatal("check IDs must be stable for the same alloc")
		}
	}
}

func TestAddressProblems(t *testing.T) {
	a := checksAlloc()
	cases := []struct {
		name, label, svcAddr, nodeIP string
		wantAddr, wantErr            string
	}{
		{"no port anywhere", "", "", "", "", "name no port"},
		{"an unknown label", "grpc", "", "", "", `port "grpc" is not a port label`},
		{"the service address replaces the IP", "http", "svc.local", "", "svc.local:25000", ""},
		{"the node IP when the alloc has no networks", "8080", "", "192.168.1.1", "192.168.1.1:8080", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			alloc := a
			if c.nodeIP != "" {
				alloc = &structs.Allocation{ID: "x"}
			}
			addr, err := address(alloc, "", c.label, c.svcAddr, c.nodeIP)
			if addr != c.wantAddr || (c.wantErr == "") != (err == "") || !strings.Contains(err, c.wantErr) {
				t.Fatalf("address = %q, %q; want %q, %q", addr, err, c.wantAddr, c.wantErr)
			}
		})
	}
}

package taskenv

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func fixture() (*structs.Node, *structs.Allocation, *structs.Task) {
	node := &structs.Node{ID: "node-1", Name: "n1", Datacenter: "dc9", Attributes: structs.NewAttributes(map[string]string{"kernel.name": "linux"}), Meta: map[string]string{"rack": "r1"}}
	task := &structs.Task{Name: "web", Resources: &structs.Resources{CPU: 250, MemoryMB: 128},
		Env: map[string]string{"LISTEN": "127.0.0.1:${NOMAD_PORT_http}", "WHO": "${node.unique.id}"}, Meta: map[string]string{"tier": "front"}}
	job := &structs.Job{ID: "api", Name: "api-name", Meta: map[string]string{"owner": "ops"},
		TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{task}}}}
	alloc := &structs.Allocation{ID: "abcdef12-3456", Name: "api.g[3]", Namespace: "default", JobID: "api", Job: job, TaskGroup: "g",
		AllocatedResources: &structs.AllocatedResources{
			Tasks:  map[string]*structs.AllocatedTaskResources{"web": {Cpu: structs.AllocatedCpuResources{CpuShares: 500}, Memory: structs.AllocatedMemoryResources{MemoryMB: 256}}},
			Shared: structs.AllocatedSharedResources{Ports: structs.AllocatedPorts{{Label: "http", Value: 25000, HostIP: "10.0.0.5"}, {Label: "admin", Value: 25001, To: 9000, HostIP: "10.0.0.5"}}},
		}}
	return node, alloc, task
}

func TestBuildSetsNomadVariables(t *testing.T) {
	node, alloc, task := fixture()
	e := Build(node, alloc, task, "global", Dirs{AllocDir: "/a/alloc", TaskDir: "/a/web/local", SecretsDir: "/a/web/secrets"}, map[string]string{"HOME": "/root"})
	want := map[string]string{
		"NOMAD_ALLOC_ID": "abcdef12-3456", "NOMAD_ALLOC_NAME": "api.g[3]", "NOMAD_ALLOC_INDEX": "3",
		"NOMAD_ALLOC_DIR": "/a/alloc", "NOMAD_TASK_DIR": "/a/web/local", "NOMAD_SECRETS_DIR": "/a/web/secrets",
		"NOMAD_TASK_NAME": "web", "NOMAD_GROUP_NAME": "g", "NOMAD_JOB_ID": "api", "NOMAD_JOB_NAME": "api-name",
		"NOMAD_NAMESPACE": "default", "NOMAD_REGION": "global", "NOMAD_DC": "dc9",
		"NOMAD_CPU_LIMIT": "500", "NOMAD_MEMORY_LIMIT": "256",
		"NOMAD_PORT_http": "25000", "NOMAD_HOST_PORT_http": "25000", "NOMAD_IP_http": "10.0.0.5",
		"NOMAD_ADDR_http": "10.0.0.5:25000", "NOMAD_HOST_ADDR_http": "10.0.0.5:25000", "NOMAD_ALLOC_PORT_http": "25000",
		"NOMAD_PORT_admin": "9000", "NOMAD_HOST_PORT_admin": "25001",
		"NOMAD_META_owner": "ops", "NOMAD_META_OWNER": "ops", "NOMAD_META_tier": "front",
		"LISTEN": "127.0.0.1:25000", "WHO": "node-1", "HOME": "/root",
	}
	got := e.Map()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// NOMAD_MEMORY_MAX_LIMIT follows the grant, not the task's ask: the
// servers grant memory_max only when memory oversubscription is enabled.
func TestMemoryMaxLimitFollowsTheGrant(t *testing.T) {
	for _, tc := range []struct {
		name    string
		granted int64
		want    string
	}{
		{"granted", 512, "512"},
		{"not granted (oversubscription off)", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node, alloc, task := fixture()
			task.Resources.MemoryMaxMB = 1024
			alloc.AllocatedResources.Tasks["web"].Memory.MemoryMaxMB = tc.granted
			got, ok := Build(node, alloc, task, "global", Dirs{}, nil).Map()["NOMAD_MEMORY_MAX_LIMIT"]
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("NOMAD_MEMORY_MAX_LIMIT = %q (set %v), want %q", got, ok, tc.want)
			}
		})
	}
}

func TestParseConfigInterpolatesAtAnyDepth(t *testing.T) {
	node, alloc, task := fixture()
	e := Build(node, alloc, task, "global", Dirs{}, map[string]string{"HOME": "/root"})
	cfg := e.ParseConfig(map[string]any{
		"command": "${NOMAD_TASK_NAME}",
		"args":    []any{"--port=${NOMAD_PORT_http}", "${attr.kernel.name}", "${meta.rack}", "${env.HOME}", "${node.datacenter}", "${nope.x}", "${NOMAD_ALLOC_ID}"},
		"nested":  map[string]any{"list": []string{"${node.unique.name}"}},
		"count":   3,
	})
	args := cfg["args"].([]any)
	want := []string{"--port=25000", "linux", "r1", "/root", "dc9", "${nope.x}", "abcdef12-3456"}
	for i, w := range want {
		if args[i] != w {
			t.Errorf("arg %d = %q, want %q", i, args[i], w)
		}
	}
	if cfg["command"] != "web" || cfg["nested"].(map[string]any)["list"].([]string)[0] != "n1" || cfg["count"] != 3 {
		t.Fatalf("config %+v", cfg)
	}
}

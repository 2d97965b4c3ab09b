package servicereg

import (
	"sort"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func testNode() *structs.Node {
	return &structs.Node{ID: "node-1", SecretID: "secret-1", Datacenter: "dc7",
		Attributes: structs.NewAttributes(map[string]string{nodeIPAttr: "192.0.2.10"})}
}

// testAlloc runs group "web" with task "srv": a group service "web" on the
// group port "http", a task service "admin" on the task port "admin", and
// a Consul service that is not Drover's to register.
func testAlloc() *structs.Allocation {
	job := &structs.Job{ID: "shop", Namespace: "default", TaskGroups: []*structs.TaskGroup{{
		Name: "web",
		Services: []*structs.Service{
			{Name: "web", PortLabel: "http", Provider: "nomad", Tags: []string{"live"}, CanaryTags: []string{"canary"}},
			{Name: "in-consul", PortLabel: "http", Provider: "consul"},
		},
		Tasks: []*structs.Task{{Name: "srv", Services: []*structs.Service{
			{Name: "admin", PortLabel: "admin", Provider: "nomad"},
		}}},
	}}}
	return &structs.Allocation{
		ID: "alloc-1", Namespace: "default", NodeID: "node-1", JobID: "shop", Job: job, TaskGroup: "web",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		TaskStates: map[string]*structs.TaskState{"srv": {State: structs.TaskStateRunning}},
		AllocatedResources: &structs.AllocatedResources{
			Shared: structs.AllocatedSharedResources{Ports: structs.AllocatedPorts{{Label: "http", Value: 25001, To: 8080, HostIP: "192.0.2.10"}}},
			Tasks: map[string]*structs.AllocatedTaskResources{"srv": {Networks: structs.Networks{{
				IP: "192.0.2.11", DynamicPorts: []structs.Port{{Label: "admin", Value: 25002}}}}}},
		},
	}
}

func byName(regs []*structs.ServiceRegistration) map[string]*structs.ServiceRegistration {
	out := map[string]*structs.ServiceRegistration{}
	for _, r := range regs {
		out[r.ServiceName] = r
	}
	return out
}

func TestRegistrationsAdvertiseThePortsOfTheAlloc(t *testing.T) {
	wanted, all := Registrations(testAlloc(), testNode())
	if len(all) != 2 {
		t.Fatalf("possible IDs %v, want the two nomad services only", all)
	}
	got := byName(wanted)
	web, admin := got["web"], got["admin"]
	if web == nil || web.Address != "192.0.2.10" || web.Port != 25001 || strings.Join(web.Tags, ",") != "live" ||
		web.ID != "_nomad-task-alloc-1-group-web-web-http" || web.Datacenter != "dc7" || web.JobID != "shop" {
		t.Fatalf("group service = %+v", web)
	}
	if admin == nil || admin.Address != "192.0.2.11" || admin.Port != 25002 || admin.ID != "_nomad-task-alloc-1-srv-admin-admin" {
		t.Fatalf("task service = %+v", admin)
	}
	if got["in-consul"] != nil {
		t.Fatal("a consul service was registered in the nomad catalog")
	}
}

func TestRegistrationsFollowTheAllocsAndTasksStates(t *testing.T) {
	cases := []struct {
		name   string
		change func(a *structs.Allocation)
		want   string
	}{
		{"running alloc and task register both", func(*structs.Allocation) {}, "admin,web"},
		{"a pending alloc registers nothing", func(a *structs.Allocation) {
			a.ClientStatus = structs.AllocClientStatusPending
			a.TaskStates["srv"].State = structs.TaskStatePending
		}, ""},
		{"a task that is not running loses its own service only", func(a *structs.Allocation) {
			a.TaskStates["srv"].State = structs.TaskStatePending
		}, "web"},
		{"an alloc the servers stop registers nothing", func(a *structs.Allocation) {
			a.DesiredStatus = structs.AllocDesiredStatusStop
		}, ""},
		{"a finished alloc registers nothing", func(a *structs.Allocation) {
			a.ClientStatus = structs.AllocClientStatusComplete
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := testAlloc()
			tc.change(a)
			wanted, all := Registrations(a, testNode())
			var names []string
			for _, r := range wanted {
				names = append(names, r.ServiceName)
			}
			if got := strings.Join(sorted(names), ","); got != tc.want {
				t.Fatalf("registered %q, want %q", got, tc.want)
			}
			if len(all) != 2 {
				t.Fatalf("possible IDs %v: every state must name both, so unwanted ones are deleted", all)
			}
		})
	}
}

func TestRegistrationsAddressModesAndCanaries(t *testing.T) {
	a := testAlloc()
	a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	a.NetworkStatus = &structs.AllocNetworkStatus{Address: "10.9.0.2"}
	tg := a.Job.TaskGroups[0]
	tg.Services[0].AddressMode = "alloc"
	tg.Tasks[0].Services = append(tg.Tasks[0].Services,
		&structs.Service{Name: "fixed", PortLabel: "9999", Provider: "nomad", Address: "svc.example.com"},
		&structs.Service{Name: "bare", Provider: "nomad"},
		&structs.Service{Name: "typo", PortLabel: "nope", Provider: "nomad"})
	got := byName(mustWanted(Registrations(a, testNode())))
	if web := got["web"]; web.Address != "10.9.0.2" || web.Port != 8080 || strings.Join(web.Tags, ",") != "canary" {
		t.Fatalf("alloc-mode canary service = %+v, want 10.9.0.2:8080 tagged canary", web)
	}
	if f := got["fixed"]; f.Address != "svc.example.com" || f.Port != 9999 {
		t.Fatalf("numeric port with an address = %+v", f)
	}
	if b := got["bare"]; b.Address != "192.0.2.10" || b.Port != 0 {
		t.Fatalf("service without a port = %+v, want the node's address", b)
	}
	if got["typo"] != nil {
		t.Fatal("a service on a port the alloc does not have was registered")
	}
}

func mustWanted(w []*structs.ServiceRegistration, _ []string) []*structs.ServiceRegistration {
	return w
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// servicesNomadJob runs one long mock task with a group service on a
// dynamic port and a task service on the same port.
func servicesNomadJob(id string) *nomadapi.Job {
	job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
	tg := nomadapi.NewTaskGroup("web", 1)
	tg.Networks = []*nomadapi.NetworkResource{{DynamicPorts: []nomadapi.Port{{Label: "http"}}}}
	tg.Services = []*nomadapi.Service{{Name: id + "-web", PortLabel: "http", Provider: "nomad", Tags: []string{"v1", "group"}}}
	task := nomadapi.NewTask("app", "mock_driver").SetConfig("run_for", "1h").
		Require(&nomadapi.Resources{CPU: ptr(50), MemoryMB: ptr(32)})
	task.Services = []*nomadapi.Service{{Name: id + "-app", PortLabel: "http", Provider: "nomad"}}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// TestNomadClientReadsNativeServices reads /v1/services and
// /v1/service/:name with Nomad's own client: the registrations of a
// running alloc in Nomad's shapes, a blocking read woken by a delete, and
// nothing once the job stops.
func TestNomadClientReadsNativeServices(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	if _, _, err := c.Jobs().Register(servicesNomadJob("shop"), nil); err != nil {
		t.Fatal(err)
	}
	var regs []*nomadapi.ServiceRegistration
	var meta *nomadapi.QueryMeta
	wait.For(t, 30*time.Second, func() (bool, string) {
		var err error
		regs, meta, err = c.Services().Get("shop-web", nil)
		if err != nil {
			return false, err.Error()
		}
		return len(regs) == 1, fmt.Sprintf("%d registrations of shop-web", len(regs))
	}, wait.Every(20*time.Millisecond))
	allocs, _, err := c.Jobs().Allocations("shop", false, nil)
	if err != nil || len(allocs) != 1 {
		t.Fatalf("allocations: %v %v", allocs, err)
	}
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	port := alloc.AllocatedResources.Shared.Ports[0]
	r := regs[0]
	if r.AllocID != alloc.ID || r.JobID != "shop" || r.Namespace != "default" || r.NodeID != alloc.NodeID || r.Datacenter != "dc1" ||
		r.Address != port.HostIP || r.Port != port.Value || strings.Join(r.Tags, ",") != "v1,group" ||
		r.ID != "_nomad-task-"+alloc.ID+"-group-web-shop-web-http" || r.CreateIndex == 0 || meta.LastIndex == 0 {
		t.Fatalf("registration %+v (meta %+v), want alloc %s at %s:%d", r, meta, alloc.ID, port.HostIP, port.Value)
	}
	wait.For(t, 10*time.Second, func() (bool, string) {
		list, _, err := c.Services().List(nil)
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, ns := range list {
			for _, s := range ns.Services {
				names = append(names, ns.Namespace+"/"+s.ServiceName+"["+strings.Join(s.Tags, ",")+"]")
			}
		}
		got := strings.Join(names, " ")
		return got == "default/shop-app[] default/shop-web[group,v1]", "services: " + got
	}, wait.Every(20*time.Millisecond))

	// A blocking read returns when the registration is deleted.
	woken := make(chan []*nomadapi.ServiceRegistration, 1)
	go func() {
		regs, _, err := c.Services().Get("shop-web", &nomadapi.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 30 * time.Second})
		if err != nil {
			t.Error(err)
		}
		woken <- regs
	}()
	if _, err := c.Services().Delete("shop-web", r.ID, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-woken:
		if len(got) != 0 {
			t.Fatalf("after the delete the blocking read answered %+v", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking read was not woken by the delete")
	}
	if _, err := c.Services().Delete("shop-web", r.ID, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("deleting it again: %v, want a 404", err)
	}

	if _, _, err := c.Jobs().Deregister("shop", false, nil); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, func() (bool, string) {
		regs, _, err := c.Services().Get("shop-app", nil)
		return err == nil && len(regs) == 0, fmt.Sprintf("shop-app still has %d registrations (%v)", len(regs), err)
	}, wait.Every(20*time.Millisecond))
}

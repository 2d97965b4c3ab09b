//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// nomadClient is Nomad's own Go client pointed at the agent, to prove the
// service endpoints answer in Nomad's shapes.
func nomadClient(t *testing.T, a *agent) *nomadapi.Client {
	t.Helper()
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: a.httpAddr()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// servicesJob is serviceJob with a group port and a native service on it.
func servicesJob(id string, m taskMarker) string {
	return serviceJob(id, m, `
    network {
      port "http" {}
    }
    service {
      name     = "`+id+`-web"
      provider = "nomad"
      port     = "http"
      tags     = ["v1"]
    }`)
}

// registrations returns the registrations of a service, described.
func registrations(nc *nomadapi.Client, name string) ([]*nomadapi.ServiceRegistration, string) {
	regs, _, err := nc.Services().Get(name, nil)
	if err != nil {
		return nil, err.Error()
	}
	var d []string
	for _, r := range regs {
		d = append(d, fmt.Sprintf("%s@%s:%d", r.AllocID[:8], r.Address, r.Port))
	}
	return regs, fmt.Sprintf("registrations of %s: %v", name, d)
}

// A native service is in the catalog while its alloc runs, at the alloc's
// address and port, and gone once the alloc stops or its node is lost.
func TestNativeServicesLiveAndDieWithTheirAllocs(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s := c.server
	nc := nomadClient(t, s)

	registerJob(t, s, servicesJob("svc", m), 10*time.Second)
	alloc, _ := waitForFirstAlloc(t, s, "svc", m)
	if alloc.AllocatedResources == nil || len(alloc.AllocatedResources.Shared.Ports) != 1 {
		t.Fatalf("alloc has no port: %+v", alloc.AllocatedResources)
	}
	port := alloc.AllocatedResources.Shared.Ports[0].Value
	registeredAt := time.Now()
	waitFor(t, 10*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "svc-web")
		return len(regs) == 1 && regs[0].AllocID == alloc.ID && regs[0].Port == port && regs[0].Address == "127.0.0.1" &&
			regs[0].JobID == "svc" && regs[0].Namespace == "default" && strings.Join(regs[0].Tags, ",") == "v1", desc
	})
	t.Logf("registered %s after the alloc was seen running", time.Since(registeredAt))
	list, _, err := nc.Services().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Namespace != "default" || len(list[0].Services) != 1 || list[0].Services[0].ServiceName != "svc-web" {
		t.Fatalf("service list = %+v", list)
	}

	out, code := s.cli("service", "info", "svc-web")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("127.0.0.1:%d", port)) || !strings.Contains(out, alloc.ID[:8]) {
		t.Fatalf("service info: exit %d\n%s", code, out)
	}
	if out, code = s.cli("service", "list"); code != 0 || !strings.Contains(out, "svc-web") || !strings.Contains(out, "[v1]") {
		t.Fatalf("service list: exit %d\n%s", code, out)
	}

	stoppedAt := time.Now()
	if _, _, err := s.api().Jobs().Deregister("svc", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "svc-web")
		return len(regs) == 0, desc
	})
	t.Logf("deregistered %s after the job stop", time.Since(stoppedAt))

	// Node lost: the client is frozen, so nothing on it deregisters; the
	// servers drop its registrations when they mark the node down.
	registerJob(t, s, servicesJob("lost", m), 10*time.Second)
	alloc, _ = waitForFirstAlloc(t, s, "lost", m)
	waitFor(t, 10*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "lost-web")
		return len(regs) == 1 && regs[0].AllocID == alloc.ID, desc
	})
	c.clients["c1"].freeze()
	waitFor(t, 30*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "lost-web")
		return len(regs) == 0, desc + "; node " + nodeStatus(s, "c1")
	})
	if st := nodeStatus(s, "c1"); st != "down" {
		t.Fatalf("registrations went while the node is %s, want down", st)
	}
}

//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
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

// serviceTemplateJob runs one marked sleep whose template lists the instances
// of service, re-rendered in place (change_mode noop) as they change.
func serviceTemplateJob(id, service string, m taskMarker) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
%s
      template {
        destination = "local/backends.txt"
        change_mode = "noop"
        data        = <<EOT
{{ range nomadService %q }}{{ .Address }}:{{ .Port }}
{{ end }}
EOT
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, id, m.command(), service)
}

// catFile reads a file of an alloc through the agent that runs it.
func catFile(a *agent, allocID, path string) (string, error) {
	rc, err := a.api().AllocFS().Cat(allocID, path, nil)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// A template reading nomadService renders the live addresses of the
// service, and renders again as instances come and go.
func TestNomadServiceTemplateRendersTheLiveAddresses(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s, c1 := c.server, c.clients["c1"]
	nc := nomadClient(t, s)

	registerJob(t, s, servicesJob("backend", m), 10*time.Second)
	backend, _ := waitForFirstAlloc(t, s, "backend", m)
	addr := func(a *api.Allocation) string {
		return fmt.Sprintf("127.0.0.1:%d\n", a.AllocatedResources.Shared.Ports[0].Value)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "backend-web")
		return len(regs) == 1, desc
	})

	registerJob(t, s, serviceTemplateJob("front", "backend-web", m), 10*time.Second)
	front, _ := waitForFirstAlloc(t, s, "front", m)
	rendered := func(lines string) func() (bool, string) {
		want := lines + "\n" // the heredoc's last line
		return func() (bool, string) {
			got, err := catFile(c1, front.ID, "t/local/backends.txt")
			if err != nil {
				return false, err.Error()
			}
			return got == want, fmt.Sprintf("rendered %q, want %q", got, want)
		}
	}
	waitFor(t, 10*time.Second, rendered(addr(backend)))

	stoppedAt := time.Now()
	if _, _, err := s.api().Jobs().Deregister("backend", true, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, rendered(""))
	t.Logf("the template dropped the stopped instance %s after the stop", time.Since(stoppedAt))

	registerJob(t, s, servicesJob("backend", m), 10*time.Second)
	var again *api.Allocation
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "backend")
		if err != nil {
			return false, err.Error()
		}
		again = nil
		for _, a := range allocs {
			if a.ClientStatus == "running" && a.DesiredStatus == "run" {
				again = a
			}
		}
		return again != nil, describeAllocs(allocs)
	})
	waitFor(t, 15*time.Second, rendered(addr(again)))
	if f, _, err := s.api().Allocations().Info(front.ID, nil); err != nil || f.TaskStates["t"].Restarts != 0 {
		t.Fatalf("change_mode noop restarted the front task: %v %+v", err, f)
	}
}

// A client that restarts registers its allocs' services again under the
// same IDs: a registration removed while it was down comes back, once,
// and nothing is duplicated.
func TestNativeServicesAfterAClientRestart(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s, c1 := c.server, c.clients["c1"]
	nc := nomadClient(t, s)
	registerJob(t, s, servicesJob("again", m), 10*time.Second)
	alloc, pid := waitForFirstAlloc(t, s, "again", m)
	var before *nomadapi.ServiceRegistration
	waitFor(t, 10*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "again-web")
		if len(regs) == 1 {
			before = regs[0]
		}
		return len(regs) == 1, desc
	})

	c1.kill()
	if _, err := nc.Services().Delete("again-web", before.ID, nil); err != nil {
		t.Fatal(err)
	}
	c1.start()
	waitFor(t, 30*time.Second, func() (bool, string) {
		regs, desc := registrations(nc, "again-web")
		return len(regs) == 1 && regs[0].ID == before.ID && regs[0].AllocID == alloc.ID && regs[0].Port == before.Port, desc
	})
	if got := m.procs()[alloc.ID]; got != pid {
		t.Fatalf("the task was restarted (pid %d, now %d): the registration is not from a re-attached alloc", pid, got)
	}
}

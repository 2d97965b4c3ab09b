//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
)

// rolloutJob is a 4-instance service of Python's HTTP server on raw_exec.
// Each instance serves /version with the text version; its http check
// probes checkPath, so a version with a check path nothing serves never
// turns healthy.
func rolloutJob(t *testing.T, version, checkPath string, canary int) string {
	t.Helper()
	body := fmt.Sprintf(`
job "roll" {
  type = "service"

  update {
    max_parallel      = 1
    canary            = %d
    health_check      = "checks"
    min_healthy_time  = "1s"
    healthy_deadline  = "8s"
    progress_deadline = "2m"
    auto_revert       = true
  }

  group "web" {
    count = 4

    network {
      port "http" {}
    }

    service {
      name     = "roll"
      port     = "http"
      provider = "nomad"

      check {
        type     = "http"
        path     = %q
        interval = "1s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "mkdir -p local/www && printf %%s %s > local/www/version && exec /usr/bin/python3 -m http.server ${NOMAD_PORT_http} --bind 127.0.0.1 --directory local/www"]
      }

      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`, canary, checkPath, version)
	p := filepath.Join(t.TempDir(), "roll-"+version+".hcl")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serving probes the job's allocs' HTTP ports over and over, recording
// how many answer /version at each sample, and with what.
type serving struct {
	a      *agent
	client *http.Client

	mu      sync.Mutex
	ports   map[string]int // alloc ID -> port
	samples int
	least   int
	leastAt time.Time
}

func newServing(a *agent) *serving {
	return &serving{a: a, client: &http.Client{Timeout: 500 * time.Millisecond}, ports: map[string]int{}, least: -1}
}

// versions answers each known alloc's /version once: the versions served,
// by alloc.
func (s *serving) versions() map[string]string {
	stubs, _, err := s.a.api().Jobs().Allocations("roll", false, nil)
	if err == nil {
		for _, st := range stubs {
			s.mu.Lock()
			_, known := s.ports[st.ID]
			s.mu.Unlock()
			if known || st.ClientStatus != "running" {
				continue
			}
			al, _, err := s.a.api().Allocations().Info(st.ID, nil)
			if err != nil || al.AllocatedResources == nil {
				continue
			}
			for _, p := range al.AllocatedResources.Shared.Ports {
				if p.Label == "http" {
					s.mu.Lock()
					s.ports[st.ID] = p.Value
					s.mu.Unlock()
				}
			}
		}
	}
	s.mu.Lock()
	ports := make(map[string]int, len(s.ports))
	for id, p := range s.ports {
		ports[id] = p
	}
	s.mu.Unlock()
	out := map[string]string{}
	for id, p := range ports {
		resp, err := s.client.Get(fmt.Sprintf("http://127.0.0.1:%d/version", p))
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			out[id] = string(b)
		}
	}
	return out
}

// sample runs until ctx ends, keeping the least number of allocs serving.
func (s *serving) sample(ctx context.Context) {
	for ctx.Err() == nil {
		n := len(s.versions())
		s.mu.Lock()
		s.samples++
		if s.least < 0 || n < s.least {
			s.least, s.leastAt = n, time.Now()
		}
		s.mu.Unlock()
	}
}

// waitServing waits until exactly want allocs answer, all with version.
func (s *serving) waitServing(t *testing.T, want int, version string) {
	t.Helper()
	waitFor(t, 90*time.Second, func() (bool, string) {
		vs := s.versions()
		if len(vs) != want {
			return false, fmt.Sprintf("%d serving: %v", len(vs), vs)
		}
		for _, v := range vs {
			if v != version {
				return false, fmt.Sprintf("serving %v, want all %s", vs, version)
			}
		}
		return true, ""
	})
}

// latestDeployment waits for the job's deployment of version to reach a
// status other than running.
func latestDeployment(t *testing.T, a *agent, version uint64) *api.Deployment {
	t.Helper()
	var d *api.Deployment
	waitFor(t, 2*time.Minute, func() (bool, string) {
		ds, _, err := a.api().Jobs().Deployments("roll", false, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, x := range ds {
			if x.JobVersion == version && !x.Active() {
				d = x
				return true, ""
			}
		}
		return false, fmt.Sprintf("no finished deployment of version %d among %d", version, len(ds))
	})
	return d
}

func singleAgent(t *testing.T) *agent {
	t.Helper()
	a := newAgent(t, agentSpec{name: "dev", extra: singleMachine})
	a.waitOneReadyNode(t)
	// raw_exec tasks outlive their agent: stop the job, and wait for its
	// servers to exit, before the agent stops (cleanups run last first).
	t.Cleanup(func() { stopJobAndWait(t, a, "roll") })
	return a
}

// stopJobAndWait stops a job and waits until none of its allocs runs:
// raw_exec tasks outlive their agent, so a test stops its job before its
// agents stop (cleanups run last first: register this after the clients
// that may run the job have started).
func stopJobAndWait(t *testing.T, a *agent, jobID string) {
	if _, _, err := a.api().Jobs().Deregister(jobID, false, nil); err != nil {
		t.Logf("stopping %s: %v", jobID, err)
		return
	}
	waitFor(t, 60*time.Second, func() (bool, string) {
		stubs, _, err := a.api().Jobs().Allocations(jobID, true, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, st := range stubs {
			if st.ClientStatus == "running" || st.ClientStatus == "pending" {
				return false, "alloc " + st.ID + " " + st.ClientStatus
			}
		}
		return true, ""
	})
}

// TestDeploymentRollsOneAtATimeAndRevertsAFailedVersion rolls a 4-alloc
// service to a new version with max_parallel 1, sampling every alloc's
// HTTP port throughout: at least 3 serve at every sample. Then it runs a
// version whose check never passes: the deployment fails, auto_revert
// registers the last stable version again, and the old version serves on
// all 4 allocs. It prints how long the revert took to be placed after the
// failed alloc was reported unhealthy.
func TestDeploymentRollsOneAtATimeAndRevertsAFailedVersion(t *testing.T) {
	a := singleAgent(t)
	s := newServing(a)

	if out, code := a.cli("job", "run", rolloutJob(t, "v1", "/version", 0)); code != 0 {
		t.Fatalf("job run v1 exited %d:\n%s", code, out)
	}
	if d := latestDeployment(t, a, 0); d.Status != "successful" {
		t.Fatalf("first deployment %s: %s", d.Status, d.StatusDescription)
	}
	s.waitServing(t, 4, "v1")

	// Roll to v2 while sampling.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.sample(ctx) }()
	out, code := a.cli("job", "run", rolloutJob(t, "v2", "/version", 0))
	cancel()
	<-done
	if code != 0 {
		t.Fatalf("job run v2 exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, "Monitoring deployment") || !strings.Contains(out, `finished with status "successful"`) {
		t.Fatalf("job run did not follow the deployment to its end:\n%s", out)
	}
	if d := latestDeployment(t, a, 1); d.Status != "successful" {
		t.Fatalf("v2 deployment %s: %s", d.Status, d.StatusDescription)
	}
	s.mu.Lock()
	least, samples, at := s.least, s.samples, s.leastAt
	s.mu.Unlock()
	t.Logf("rolling v1 -> v2: %d samples, at least %d allocs serving (fewest at %s)", samples, least, at.Format(time.RFC3339Nano))
	if samples < 10 || least < 3 {
		t.Fatalf("during the rollout %d allocs served at one point (of %d samples); max_parallel 1 must keep 3 serving", least, samples)
	}
	s.waitServing(t, 4, "v2")
	if job, _, err := a.api().Jobs().Info("roll", nil); err != nil || job.Stable == nil || !*job.Stable || *job.Version != 1 {
		t.Fatalf("after a successful deployment the job is %+v (%v), want version 1 stable", job, err)
	}

	// v3's check never passes: the deployment fails and rolls back to v2.
	out, code = a.cli("job", "run", rolloutJob(t, "v3", "/missing", 0))
	if code == 0 {
		t.Fatalf("job run of a version that fails exited 0:\n%s", out)
	}
	failed := latestDeployment(t, a, 2)
	if failed.Status != "failed" || failed.StatusDescription != "Failed due to unhealthy allocations - rolling back to job version 1" {
		t.Fatalf("v3 deployment %s: %q", failed.Status, failed.StatusDescription)
	}
	var unhealthyAt time.Time
	stubs, _, err := a.api().Deployments().Allocations(failed.ID, nil)
	if err != nil || len(stubs) == 0 {
		t.Fatalf("allocs of the failed deployment: %v %d", err, len(stubs))
	}
	for _, st := range stubs {
		al, _, err := a.api().Allocations().Info(st.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ds := al.DeploymentStatus; ds != nil && ds.Healthy != nil && !*ds.Healthy && (unhealthyAt.IsZero() || ds.Timestamp.Before(unhealthyAt)) {
			unhealthyAt = ds.Timestamp
		}
	}
	if unhealthyAt.IsZero() {
		t.Fatal("no alloc of the failed deployment was reported unhealthy")
	}
	// The revert is job version 3 (version 1's spec). The v2 allocs still
	// running are updated to it in place; the revert is placed when the
	// first new alloc of it, replacing the broken one, is created.
	var placedAt time.Time
	waitFor(t, 60*time.Second, func() (bool, string) {
		all, _, err := a.api().Jobs().Allocations("roll", true, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, st := range all {
			al, _, err := a.api().Allocations().Info(st.ID, nil)
			if err != nil || al.Job == nil || al.Job.Version == nil || *al.Job.Version != 3 {
				continue
			}
			if c := time.Unix(0, al.CreateTime); c.After(unhealthyAt) && (placedAt.IsZero() || c.Before(placedAt)) {
				placedAt = c
			}
		}
		return !placedAt.IsZero(), "no new alloc of the reverted version yet"
	})
	failedAt := time.Unix(0, failed.ModifyTime)
	fmt.Printf("deployment e2e: failed health reported -> deployment failed and revert registered: %s; -> revert placed: %s\n",
		failedAt.Sub(unhealthyAt), placedAt.Sub(unhealthyAt))
	t.Logf("unhealthy at %s, failed at %s, revert placed at %s", unhealthyAt.Format(time.RFC3339Nano),
		failedAt.Format(time.RFC3339Nano), placedAt.Format(time.RFC3339Nano))
	if failedAt.Before(unhealthyAt) || placedAt.Before(failedAt) {
		t.Fatalf("out of order: unhealthy %s, failed %s, revert placed %s", unhealthyAt, failedAt, placedAt)
	}
	if job, _, err := a.api().Jobs().Info("roll", nil); err != nil || *job.Version != 3 {
		t.Fatalf("after the revert the job is %+v (%v), want version 3", job, err)
	}
	s.waitServing(t, 4, "v2")
	if d := latestDeployment(t, a, 3); d.Status != "successful" {
		t.Fatalf("the revert's deployment %s: %s", d.Status, d.StatusDescription)
	}
}

// TestDeploymentCanaryIsPromotedThroughNomadsClient runs a version with a
// canary, waits for the canary to turn healthy while the old version still
// serves, promotes it with Nomad's own Go client, and sees the new version
// roll out to all allocs.
func TestDeploymentCanaryIsPromotedThroughNomadsClient(t *testing.T) {
	a := singleAgent(t)
	s := newServing(a)
	if out, code := a.cli("job", "run", rolloutJob(t, "v1", "/version", 1)); code != 0 {
		t.Fatalf("job run v1 exited %d:\n%s", code, out)
	}
	s.waitServing(t, 4, "v1")

	if out, code := a.cli("job", "run", "-detach", rolloutJob(t, "v2", "/version", 1)); code != 0 {
		t.Fatalf("job run v2 exited %d:\n%s", code, out)
	}
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: a.httpAddr()})
	if err != nil {
		t.Fatal(err)
	}
	var dep *nomadapi.Deployment
	waitFor(t, 90*time.Second, func() (bool, string) {
		d, _, err := nc.Jobs().LatestDeployment("roll", nil)
		if err != nil || d == nil || d.JobVersion != 1 {
			return false, fmt.Sprintf("latest deployment %+v (%v)", d, err)
		}
		dep = d
		st := d.TaskGroups["web"]
		return st.DesiredCanaries == 1 && len(st.PlacedCanaries) == 1 && st.HealthyAllocs == 1,
			fmt.Sprintf("%s: %+v", d.Status, st)
	})
	// The canary serves v2 beside the four v1 allocs; nothing more rolls
	// until the promotion.
	vs := s.versions()
	count := map[string]int{}
	for _, v := range vs {
		count[v]++
	}
	if count["v1"] != 4 || count["v2"] != 1 {
		t.Fatalf("before promotion serving %v, want 4 v1 and the v2 canary", count)
	}
	if d, _, _ := nc.Deployments().Info(dep.ID, nil); d.TaskGroups["web"].Promoted || d.Status != "running" {
		t.Fatalf("before promotion: %s, promoted %t", d.Status, d.TaskGroups["web"].Promoted)
	}
	resp, _, err := nc.Deployments().PromoteAll(dep.ID, nil)
	if err != nil || resp.EvalID == "" {
		t.Fatalf("promote: %v %+v", err, resp)
	}
	waitFor(t, 2*time.Minute, func() (bool, string) {
		d, _, err := nc.Deployments().Info(dep.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return d.Status == "successful", d.Status + ": " + d.StatusDescription
	})
	s.waitServing(t, 4, "v2")
}

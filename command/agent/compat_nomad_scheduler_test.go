package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	nomadapi "github.com/hashicorp/nomad/api"
)

// TestNomadClientSchedulerConfiguration drives the scheduler
// configuration endpoints with Nomad's own client: defaults, set,
// check-and-set, refusals, and what the flags do to registrations and
// placements.
func TestNomadClientSchedulerConfiguration(t *testing.T) {
	a := serverAgent(t)
	c := nomadClient(t, a)
	op := c.Operator()

	resp, qm, err := op.SchedulerGetConfiguration(nil)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	def := resp.SchedulerConfig
	if def == nil || def.SchedulerAlgorithm != nomadapi.SchedulerAlgorithmBinpack || def.MemoryOversubscriptionEnabled ||
		def.RejectJobRegistration || def.PauseEvalBroker ||
		def.PreemptionConfig != (nomadapi.PreemptionConfig{SystemSchedulerEnabled: true}) {
		t.Fatalf("a new cluster must answer Nomad's defaults: %+v", def)
	}
	if def.ModifyIndex == 0 || qm.LastIndex != def.ModifyIndex || !qm.KnownLeader {
		t.Fatalf("defaults are stored at an index the read reports: config %+v, meta %+v", def, qm)
	}

	t.Run("the read has Nomad's JSON shape and headers", func(t *testing.T) {
		r, raw := call(t, http.MethodGet, a.URL+"/v1/operator/scheduler/configuration", nil)
		requireStatus(t, r, raw, http.StatusOK, "SchedulerConfig")
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"SchedulerConfig", "Index", "LastContact", "KnownLeader"} {
			if _, ok := body[k]; !ok {
				t.Errorf("answer lacks %q: %s", k, raw)
			}
		}
		var cfg map[string]any
		if err := json.Unmarshal(body["SchedulerConfig"], &cfg); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"SchedulerAlgorithm", "PreemptionConfig", "MemoryOversubscriptionEnabled",
			"RejectJobRegistration", "PauseEvalBroker", "CreateIndex", "ModifyIndex"} {
			if _, ok := cfg[k]; !ok {
				t.Errorf("SchedulerConfig lacks %q: %s", k, body["SchedulerConfig"])
			}
		}
		if index(t, r) != def.ModifyIndex || r.Header.Get("X-Nomad-KnownLeader") != "true" {
			t.Errorf("headers: %v", r.Header)
		}
	})

	// Set, then check-and-set against a stale and the current index.
	want := *def
	want.SchedulerAlgorithm = nomadapi.SchedulerAlgorithmSpread
	want.MemoryOversubscriptionEnabled = true
	want.PreemptionConfig.ServiceSchedulerEnabled = true
	set, wm, err := op.SchedulerSetConfiguration(&want, nil)
	if err != nil || !set.Updated || wm.LastIndex <= def.ModifyIndex {
		t.Fatalf("set: %+v %+v %v", set, wm, err)
	}
	got := mustNomadSchedulerConfig(t, c)
	if got.SchedulerAlgorithm != want.SchedulerAlgorithm || !got.MemoryOversubscriptionEnabled ||
		got.PreemptionConfig != want.PreemptionConfig || got.ModifyIndex != wm.LastIndex || got.CreateIndex != def.CreateIndex {
		t.Fatalf("after set: %+v, want %+v at %d", got, want, wm.LastIndex)
	}
	stale := *got
	stale.ModifyIndex = def.ModifyIndex
	stale.SchedulerAlgorithm = nomadapi.SchedulerAlgorithmBinpack
	cas, _, err := op.SchedulerCASConfiguration(&stale, nil)
	if err != nil || cas.Updated {
		t.Fatalf("a check-and-set against a stale index must answer Updated=false: %+v %v", cas, err)
	}
	if diff := cmp.Diff(got, mustNomadSchedulerConfig(t, c)); diff != "" {
		t.Fatalf("a failed check-and-set changed the configuration (-before +after):\n%s", diff)
	}
	stale.ModifyIndex = got.ModifyIndex
	cas, casMeta, err := op.SchedulerCASConfiguration(&stale, nil)
	if err != nil || !cas.Updated {
		t.Fatalf("a check-and-set against the current index must apply: %+v %v", cas, err)
	}
	if now := mustNomadSchedulerConfig(t, c); now.SchedulerAlgorithm != nomadapi.SchedulerAlgorithmBinpack || now.ModifyIndex != casMeta.LastIndex {
		t.Fatalf("after check-and-set: %+v", now)
	}

	t.Run("bad input is a 400 that changes nothing", func(t *testing.T) {
		before := mustNomadSchedulerConfig(t, c)
		bad := *before
		bad.SchedulerAlgorithm = "round-robin"
		if _, _, err := op.SchedulerSetConfiguration(&bad, nil); err == nil ||
			!strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "SchedulerAlgorithm") || !strings.Contains(err.Error(), `"spread"`) {
			t.Fatalf("an unknown algorithm: %v", err)
		}
		url := a.URL + "/v1/operator/scheduler/configuration"
		r, raw := call(t, http.MethodPut, url, `{"SchedulerAlgorithm": "spread",`)
		requireStatus(t, r, raw, http.StatusBadRequest, "not valid JSON")
		r, raw = call(t, http.MethodPut, url, `{"PauseEvalBroker": "yes"}`)
		requireStatus(t, r, raw, http.StatusBadRequest, `field "PauseEvalBroker"`)
		r, raw = call(t, http.MethodPut, url+"?cas=latest", `{"SchedulerAlgorithm": "spread"}`)
		requireStatus(t, r, raw, http.StatusBadRequest, `invalid cas "latest"`)
		r, raw = call(t, http.MethodDelete, url, nil)
		if r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("DELETE: status %d: %s", r.StatusCode, raw)
		}
		if diff := cmp.Diff(before, mustNomadSchedulerConfig(t, c)); diff != "" {
			t.Fatalf("refused requests changed the configuration (-before +after):\n%s", diff)
		}
	})

	t.Run("memory_max is granted only with oversubscription", func(t *testing.T) {
		registerNode(t, a, nil)
		for _, enabled := range []bool{true, false} {
			cfg := mustNomadSchedulerConfig(t, c)
			cfg.MemoryOversubscriptionEnabled = enabled
			if _, _, err := op.SchedulerSetConfiguration(cfg, nil); err != nil {
				t.Fatal(err)
			}
			id := "mem-off"
			if enabled {
				id = "mem-on"
			}
			job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
			task := nomadapi.NewTask("app", "mock_driver").SetConfig("run_for", "1h")
			task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64), MemoryMaxMB: ptr(256)})
			job.AddTaskGroup(nomadapi.NewTaskGroup("web", 1).AddTask(task))
			if _, _, err := c.Jobs().Register(job, nil); err != nil {
				t.Fatalf("register %s: %v", id, err)
			}
			var alloc *nomadapi.Allocation
			waitUntil(t, id+" to be placed", func() bool {
				stubs, _, err := c.Jobs().Allocations(id, false, nil)
				if err != nil || len(stubs) != 1 {
					return false
				}
				alloc, _, err = c.Allocations().Info(stubs[0].ID, nil)
				return err == nil
			})
			mem := alloc.AllocatedResources.Tasks["app"].Memory
			wantMax := int64(0)
			if enabled {
				wantMax = 256
			}
			if mem.MemoryMB != 64 || mem.MemoryMaxMB != wantMax {
				t.Fatalf("oversubscription %v: granted %+v, want memory 64 max %d", enabled, mem, wantMax)
			}
		}
	})

	t.Run("reject_job_registration refuses registrations with a 403", func(t *testing.T) {
		cfg := mustNomadSchedulerConfig(t, c)
		cfg.RejectJobRegistration = true
		if _, _, err := op.SchedulerSetConfiguration(cfg, nil); err != nil {
			t.Fatal(err)
		}
		job := nomadapi.NewBatchJob("refused", "refused", "global", 50).AddDatacenter("dc1")
		job.AddTaskGroup(nomadapi.NewTaskGroup("g", 1).AddTask(nomadapi.NewTask("t", "mock_driver").SetConfig("run_for", "1s")))
		_, _, err := c.Jobs().Register(job, nil)
		if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "RejectJobRegistration") {
			t.Fatalf("register while rejecting: %v", err)
		}
		if _, _, err := c.Jobs().Info("refused", nil); err == nil {
			t.Fatal("a refused job was stored")
		}
		cfg.RejectJobRegistration = false
		cfg.ModifyIndex = mustNomadSchedulerConfig(t, c).ModifyIndex
		if r, _, err := op.SchedulerCASConfiguration(cfg, nil); err != nil || !r.Updated {
			t.Fatalf("allowing registrations again: %+v %v", r, err)
		}
		if _, _, err := c.Jobs().Register(job, nil); err != nil {
			t.Fatalf("register once allowed again: %v", err)
		}
	})
}

func mustNomadSchedulerConfig(t *testing.T, c *nomadapi.Client) *nomadapi.SchedulerConfiguration {
	t.Helper()
	resp, _, err := c.Operator().SchedulerGetConfiguration(nil)
	if err != nil || resp.SchedulerConfig == nil {
		t.Fatalf("reading the scheduler configuration: %+v %v", resp, err)
	}
	return resp.SchedulerConfig
}

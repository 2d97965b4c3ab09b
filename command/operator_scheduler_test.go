package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

// kv is one get-config line, keys padded as the longest key is.
func kv(key, value string) string {
	return fmt.Sprintf("%-29s = %s", key, value)
}

// The scheduler verbs against a real agent: read the defaults, change
// some settings and see only those change, and the refusals.
func TestOperatorSchedulerConfigAgainstAnAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	serverOnly := func(c *config.Config) { c.Client.Enabled = false }
	skipWithoutAgent(t, serverOnly)
	ta := agenttest.New(t, serverOnly)
	addr := "-address=" + ta.URL

	res := runCLI(t, nil, "", "operator", "scheduler", "get-config", addr)
	if res.code != 0 {
		t.Fatalf("get-config: exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		kv("Scheduler Algorithm", "binpack"),
		kv("Memory Oversubscription", "false"),
		kv("Reject Job Registration", "false"),
		kv("Pause Eval Broker", "false"),
		kv("Preemption System Scheduler", "true"),
		kv("Preemption Service Scheduler", "false"),
		kv("Preemption Batch Scheduler", "false"),
		kv("Preemption SysBatch Scheduler", "false"),
		"Modify Index",
	)

	res = runCLI(t, nil, "", "operator", "scheduler", "set-config", addr,
		"-scheduler-algorithm=spread", "-memory-oversubscription=true", "-pause-eval-broker", "-preempt-service-scheduler=true")
	if res.code != 0 || res.stdout != "Scheduler configuration updated!\n" {
		t.Fatalf("set-config: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "scheduler", "get-config", addr)
	wantLines(t, res.stdout,
		kv("Scheduler Algorithm", "spread"),
		kv("Memory Oversubscription", "true"),
		kv("Reject Job Registration", "false"),
		kv("Pause Eval Broker", "true"),
		kv("Preemption System Scheduler", "true"),
		kv("Preemption Service Scheduler", "true"),
		kv("Preemption Batch Scheduler", "false"),
	)

	res = runCLI(t, nil, "", "operator", "scheduler", "get-config", addr, "-json")
	var out struct {
		SchedulerConfig struct {
			SchedulerAlgorithm string
			PauseEvalBroker    bool
			ModifyIndex        uint64
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.SchedulerConfig.SchedulerAlgorithm != "spread" ||
		!out.SchedulerConfig.PauseEvalBroker || out.SchedulerConfig.ModifyIndex == 0 {
		t.Fatalf("get-config -json: %v\n%s", err, res.stdout)
	}
	res = runCLI(t, nil, "", "operator", "scheduler", "get-config", addr, "-t", "{{.SchedulerConfig.SchedulerAlgorithm}}")
	if res.code != 0 || res.stdout != "spread\n" {
		t.Fatalf("get-config -t: exit %d %q %s", res.code, res.stdout, res.stderr)
	}

	// A check index that is not the current one changes nothing.
	stale := fmt.Sprint(out.SchedulerConfig.ModifyIndex - 1)
	res = runCLI(t, nil, "", "operator", "scheduler", "set-config", addr, "-check-index="+stale, "-pause-eval-broker=false")
	if res.code != 1 || !strings.Contains(res.stderr, "check-index "+stale+" does not match") {
		t.Fatalf("stale -check-index: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// An unknown algorithm is refused by the server with the allowed values.
	res = runCLI(t, nil, "", "operator", "scheduler", "set-config", addr, "-scheduler-algorithm=fifo")
	if res.code != 1 || !strings.Contains(res.stderr, "SchedulerAlgorithm") || !strings.Contains(res.stderr, `"binpack"`) {
		t.Fatalf("unknown algorithm: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "scheduler", "set-config", addr, "-reject-job-registration=maybe")
	if res.code != 1 || !strings.Contains(res.stderr, "must be true or false") {
		t.Fatalf("bad boolean: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "scheduler", "get-config", addr)
	wantLines(t, res.stdout, kv("Scheduler Algorithm", "spread"), kv("Pause Eval Broker", "true"),
		kv("Modify Index", fmt.Sprint(out.SchedulerConfig.ModifyIndex)))

	// With the right check index the change applies.
	res = runCLI(t, nil, "", "operator", "scheduler", "set-config", addr,
		"-check-index="+fmt.Sprint(out.SchedulerConfig.ModifyIndex), "-pause-eval-broker=false")
	if res.code != 0 {
		t.Fatalf("set-config -check-index: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "scheduler", "get-config", addr)
	wantLines(t, res.stdout, kv("Scheduler Algorithm", "spread"), kv("Pause Eval Broker", "false"))
}

// set-config sends the configuration it read with only the named
// settings changed, as a check-and-set on the index it read, and says so
// when someone else changed the configuration in between.
func TestOperatorSchedulerSetConfigIsACheckAndSet(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/operator/scheduler/configuration", `{"SchedulerConfig":{
		"SchedulerAlgorithm":"binpack","MemoryOversubscriptionEnabled":true,"RejectJobRegistration":false,"PauseEvalBroker":false,
		"PreemptionConfig":{"SystemSchedulerEnabled":true,"SysBatchSchedulerEnabled":false,"BatchSchedulerEnabled":false,"ServiceSchedulerEnabled":false},
		"CreateIndex":3,"ModifyIndex":7},"Index":7,"KnownLeader":true}`)
	f.json("PUT /v1/operator/scheduler/configuration", `{"Updated":false,"Index":9}`)
	res := runCLI(t, f, "", "operator", "scheduler", "set-config", "-reject-job-registration", "-preempt-system-scheduler=false")
	if res.code != 1 || res.stdout != "Scheduler configuration could not be atomically updated, please try again\n" {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	reqs := f.requests("PUT /v1/operator/scheduler/configuration")
	if len(reqs) != 1 || reqs[0].query.Get("cas") != "7" {
		t.Fatalf("want one check-and-set at index 7, got %+v", reqs)
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(reqs[0].body), &sent); err != nil {
		t.Fatal(err)
	}
	preempt, _ := sent["PreemptionConfig"].(map[string]any)
	if sent["SchedulerAlgorithm"] != "binpack" || sent["MemoryOversubscriptionEnabled"] != true || sent["RejectJobRegistration"] != true ||
		sent["PauseEvalBroker"] != false || preempt["SystemSchedulerEnabled"] != false {
		t.Fatalf("set-config must change only the named settings: sent %s", reqs[0].body)
	}
}

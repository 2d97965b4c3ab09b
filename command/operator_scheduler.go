package command

import (
	"fmt"
	"strconv"

	"github.com/drover-sched/drover/api"
)

const operatorSchedulerGetConfigHelp = `
Usage: drover operator scheduler get-config [options]

  Display the cluster's scheduler configuration.

Get-Config Options:

  -json
    Print the configuration response as JSON.

  -t
    Format the configuration response with a Go template, for example
    -t '{{.SchedulerConfig.SchedulerAlgorithm}}'.
`

func operatorSchedulerGetConfig(m *Meta, args []string) int {
	c := m.cmdLine("operator scheduler get-config", operatorSchedulerGetConfigHelp, noArgs)
	// Registered without withOutput: this verb checks its arguments before
	// it refuses -json with -t.
	c.out.register(c.FlagSet)
	if code, ok := c.parse(args); !ok {
		return code
	}
	if code, ok := c.checkOutput(); !ok {
		return code
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.errorf("Error querying scheduler configuration: %v", err)
	}
	if code, done := c.print(resp); done {
		return code
	}
	conf := resp.SchedulerConfig
	if conf == nil {
		return m.errorf("Error querying scheduler configuration: the answer holds no configuration")
	}
	fmt.Fprint(m.stdout, keyValues([]string{
		"Scheduler Algorithm|" + string(conf.SchedulerAlgorithm),
		fmt.Sprintf("Memory Oversubscription|%t", conf.MemoryOversubscriptionEnabled),
		fmt.Sprintf("Reject Job Registration|%t", conf.RejectJobRegistration),
		fmt.Sprintf("Pause Eval Broker|%t", conf.PauseEvalBroker),
		fmt.Sprintf("Preemption System Scheduler|%t", conf.PreemptionConfig.SystemSchedulerEnabled),
		fmt.Sprintf("Preemption Service Scheduler|%t", conf.PreemptionConfig.ServiceSchedulerEnabled),
		fmt.Sprintf("Preemption Batch Scheduler|%t", conf.PreemptionConfig.BatchSchedulerEnabled),
		fmt.Sprintf("Preemption SysBatch Scheduler|%t", conf.PreemptionConfig.SysBatchSchedulerEnabled),
		fmt.Sprintf("Modify Index|%d", conf.ModifyIndex),
	}))
	return 0
}

const operatorSchedulerSetConfigHelp = `
Usage: drover operator scheduler set-config [options]

  Change the cluster's scheduler configuration. Only the settings named
  by flags change; the others keep their current values. The change is a
  check-and-set against the configuration just read, so a concurrent
  change by someone else is never overwritten: the command then fails and
  can be run again.

Set-Config Options:

  -check-index=<index>
    Change the configuration only if its modify index is still <index>.

  -scheduler-algorithm=["binpack"|"spread"]
    How placements choose among nodes: binpack fills nodes up, spread
    uses the emptiest.

  -memory-oversubscription=[true|false]
    When true, tasks may use memory up to their memory_max, if the node
    has it free. When false, memory_max is ignored.

  -reject-job-registration=[true|false]
    When true, job registration, dispatch and scale requests are refused,
    for every caller (Drover has no ACL tokens to exempt), to shed load
    during an incident.

  -pause-eval-broker=[true|false]
    When true, the leader stops handing evaluations to the schedulers:
    nothing is scheduled, but evaluations keep queueing and run once it
    is set back to false.

  -preempt-batch-scheduler=[true|false]
  -preempt-service-scheduler=[true|false]
  -preempt-sysbatch-scheduler=[true|false]
  -preempt-system-scheduler=[true|false]
    Whether jobs of that type may preempt lower-priority work. Drover
    stores these settings but does not preempt yet.
`

// optBool is a boolean flag that remembers whether it was given, so
// set-config changes only what the operator named.
type optBool struct {
	set, v bool
}

func (b *optBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

func (b *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("must be true or false, got %q", s)
	}
	b.set, b.v = true, v
	return nil
}

// IsBoolFlag lets -flag alone mean -flag=true.
func (b *optBool) IsBoolFlag() bool { return true }

// merge writes the flag's value into dst if it was given.
func (b *optBool) merge(dst *bool) {
	if b.set {
		*dst = b.v
	}
}

func operatorSchedulerSetConfig(m *Meta, args []string) int {
	c := m.cmdLine("operator scheduler set-config", operatorSchedulerSetConfigHelp, noArgs)
	checkIndex := c.String("check-index", "", "")
	algorithm := c.String("scheduler-algorithm", "", "")
	var memOversub, rejectJobs, pauseBroker, preemptBatch, preemptService, preemptSysBatch, preemptSystem optBool
	c.Var(&memOversub, "memory-oversubscription", "")
	c.Var(&rejectJobs, "reject-job-registration", "")
	c.Var(&pauseBroker, "pause-eval-broker", "")
	c.Var(&preemptBatch, "preempt-batch-scheduler", "")
	c.Var(&preemptService, "preempt-service-scheduler", "")
	c.Var(&preemptSysBatch, "preempt-sysbatch-scheduler", "")
	c.Var(&preemptSystem, "preempt-system-scheduler", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	var wantIndex uint64
	if *checkIndex != "" {
		n, err := strconv.ParseUint(*checkIndex, 10, 64)
		if err != nil {
			return m.errorf("Error parsing check-index value %q: must be a non-negative integer", *checkIndex)
		}
		wantIndex = n
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.errorf("Error querying for scheduler configuration: %v", err)
	}
	conf := resp.SchedulerConfig
	if conf == nil {
		return m.errorf("Error querying for scheduler configuration: the answer holds no configuration")
	}
	if *checkIndex != "" && conf.ModifyIndex != wantIndex {
		return m.errorf("Error performing check index set: check-index %d does not match the current modify index %d", wantIndex, conf.ModifyIndex)
	}
	if *algorithm != "" {
		conf.SchedulerAlgorithm = api.SchedulerAlgorithm(*algorithm)
	}
	memOversub.merge(&conf.MemoryOversubscriptionEnabled)
	rejectJobs.merge(&conf.RejectJobRegistration)
	pauseBroker.merge(&conf.PauseEvalBroker)
	preemptBatch.merge(&conf.PreemptionConfig.BatchSchedulerEnabled)
	preemptService.merge(&conf.PreemptionConfig.ServiceSchedulerEnabled)
	preemptSysBatch.merge(&conf.PreemptionConfig.SysBatchSchedulerEnabled)
	preemptSystem.merge(&conf.PreemptionConfig.SystemSchedulerEnabled)

	// The check-and-set is against the configuration just read (or the
	// index the operator named, which was just checked to be the same).
	result, _, err := client.Operator().SchedulerCASConfiguration(conf, nil)
	if err != nil {
		return m.errorf("Error setting scheduler configuration: %v", err)
	}
	if !result.Updated {
		m.out("Scheduler configuration could not be atomically updated, please try again")
		return 1
	}
	m.out("Scheduler configuration updated!")
	return 0
}

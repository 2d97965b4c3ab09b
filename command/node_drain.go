package command

import (
	"time"

	"github.com/drover-sched/drover/api"
)

const nodeDrainHelp = `
Usage: drover node drain [options] <node>

  Start or stop draining a node. A draining node takes no new work, and its
  allocations are migrated to other nodes, a few at a time as each group's
  migrate block allows, until the deadline, when the rest are stopped.
  Without -detach, the drain is monitored until all allocations have left.

Drain Options:

  -enable            Start draining.
  -disable           Stop draining (the node stays ineligible with
                     -keep-ineligible).
  -deadline=<dur>    How long allocations may take to migrate. Default: 1h.
  -force             Stop all allocations at once, without waiting.
  -no-deadline       Wait for migrations however long they take.
  -ignore-system     Leave system job allocations running.
  -keep-ineligible   With -disable, leave the node ineligible.
  -detach            Return once the drain is set.
  -yes               Do not ask for confirmation of a node given by prefix.
  -verbose           Show full IDs.
`

// defaultDrainDeadline is Nomad's default.
const defaultDrainDeadline = time.Hour

func nodeDrain(m *Meta, args []string) int {
	fs := m.flagSet("node drain", nodeDrainHelp)
	enable := fs.Bool("enable", false, "")
	disable := fs.Bool("disable", false, "")
	deadline := fs.Duration("deadline", defaultDrainDeadline, "")
	force := fs.Bool("force", false, "")
	noDeadline := fs.Bool("no-deadline", false, "")
	ignoreSystem := fs.Bool("ignore-system", false, "")
	keepIneligible := fs.Bool("keep-ineligible", false, "")
	detach := fs.Bool("detach", false, "")
	yes := fs.Bool("yes", false, "")
	verbose := fs.Bool("verbose", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	switch {
	case *enable == *disable:
		return m.usageError(fs, "Exactly one of -enable and -disable is required")
	case fs.NArg() != 1:
		return m.usageError(fs, "This command takes one argument: <node>")
	case *force && *noDeadline, *force && flagWasSet(fs, "deadline"), *noDeadline && flagWasSet(fs, "deadline"):
		return m.usageError(fs, "Only one of -deadline, -force and -no-deadline may be given")
	case *deadline <= 0 && !*force && !*noDeadline:
		return m.usageError(fs, "The -deadline must be positive; use -force to stop allocations at once")
	}

	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	given := fs.Arg(0)
	nodeID, code, ok := m.resolveNode(client, given, *verbose)
	if !ok {
		return code
	}
	if nodeID != given && !*yes {
		action := "enable"
		if *disable {
			action = "disable"
		}
		if !m.confirm("Are you sure you want to " + action + ` drain mode for node "` + nodeID + `"?`) {
			m.out("Canceling drain strategy change")
			return 0
		}
	}

	var spec *api.DrainSpec
	if *enable {
		spec = &api.DrainSpec{Deadline: *deadline, IgnoreSystemJobs: *ignoreSystem}
		switch {
		case *force:
			spec.Deadline = -1
		case *noDeadline:
			spec.Deadline = 0
		}
	}
	if _, err := client.Nodes().UpdateDrain(nodeID, spec, *disable && !*keepIneligible, nil); err != nil {
		return m.errorf("Error updating drain specification: %v", err)
	}
	if *disable {
		m.out("Node %q drain strategy unset", nodeID)
		return 0
	}
	m.out("Node %q drain strategy set", nodeID)
	if *detach {
		return 0
	}
	return m.withInterrupt(func() int { return newDrainMonitor(m, client, nodeID, *verbose).run() })
}

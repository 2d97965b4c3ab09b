package command

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/api"
)

const nodeDrainHelp = `
Usage: drover node drain [options] <node>

  Start or stop draining a node. A draining node takes no new work at once,
  and the servers' drainer migrates its allocations to other nodes, as many
  at a time as each group's migrate block allows (a group never has more
  than max_parallel allocations moving whose replacements are not yet
  healthy). Batch allocations run until they finish or the deadline; system
  allocations stop last, once everything else has left. At the deadline
  everything left is stopped. Work that fits nowhere else keeps running
  until the deadline. The drain completes when nothing that must move is
  left; the node then stays ineligible for new work.

  Without -detach, the drain is followed live (allocations migrated and
  remaining, the deadline) until it completes; the command exits 0 then,
  and 1 if the drain is canceled or monitoring is interrupted.

Drain Options:

  -enable            Start draining (or change the running drain).
  -disable           Stop draining. The node becomes eligible again unless
                     -keep-ineligible is given.
  -deadline=<dur>    How long allocations may take to migrate before the
                     rest are stopped. Default: 1h.
  -force             Stop all allocations at once (a zero deadline).
  -no-deadline       Wait for migrations however long they take.
  -ignore-system     Leave system job allocations running on the node.
  -m <message>       A message kept with the drain (the node's LastDrain
                     Meta "message"), e.g. why the node is drained.
  -keep-ineligible   With -disable, leave the node ineligible. With -enable
                     the node stays ineligible once drained by default;
                     -keep-ineligible=false makes it eligible again then.
  -detach            Return once the drain is set.
  -monitor           Follow the node's drain without changing it (no
                     -enable or -disable).
  -self              Drain the node of the agent the CLI talks to, instead
                     of naming one.
  -yes               Do not ask for confirmation of a node given by prefix.
  -verbose           Show full IDs.
`

// defaultDrainDeadline is Nomad's default.
const defaultDrainDeadline = time.Hour

// drainArgs is the command line of `node drain`, checked.
type drainArgs struct {
	enable, disable, monitor, detach, self, yes, verbose bool
	spec                                                 *api.DrainSpec
	markEligible                                         bool
	node                                                 string
	message                                              string
}

// parseDrainArgs checks the flags' combinations and says what is wrong
// with one that does not make sense.
func parseDrainArgs(c *cmdLine, args []string) (*drainArgs, int, bool) {
	enable := c.Bool("enable", false, "")
	disable := c.Bool("disable", false, "")
	deadline := c.Duration("deadline", defaultDrainDeadline, "")
	force := c.Bool("force", false, "")
	noDeadline := c.Bool("no-deadline", false, "")
	ignoreSystem := c.Bool("ignore-system", false, "")
	keepIneligible := c.Bool("keep-ineligible", false, "")
	detach := c.Bool("detach", false, "")
	monitor := c.Bool("monitor", false, "")
	self := c.Bool("self", false, "")
	yes := c.Bool("yes", false, "")
	message := c.String("m", "", "")
	if code, ok := c.parse(args); !ok {
		return nil, code, false
	}
	bad := func(msg string) (*drainArgs, int, bool) { return nil, c.usageError(msg), false }
	specFlag := c.flagWasSet("deadline") || *force || *noDeadline || *ignoreSystem
	switch {
	case *monitor && (*enable || *disable):
		return bad("The -monitor flag follows a drain without changing it: it cannot be combined with -enable or -disable")
	case *monitor && (specFlag || c.flagWasSet("keep-ineligible") || *detach || *message != ""):
		return bad("The -monitor flag takes no drain options (-deadline, -force, -no-deadline, -ignore-system, -keep-ineligible, -detach, -m)")
	case !*monitor && *enable == *disable:
		return bad("Exactly one of -enable and -disable is required (or -monitor to follow a drain)")
	case *disable && specFlag:
		return bad("The -deadline, -force, -no-deadline and -ignore-system flags apply to -enable only")
	case *self && c.NArg() != 0:
		return bad("With -self this command takes no <node> argument")
	case !*self && c.NArg() != 1:
		return bad("This command takes one argument: <node> (or -self)")
	case *force && *noDeadline, *force && c.flagWasSet("deadline"), *noDeadline && c.flagWasSet("deadline"):
		return bad("Only one of -deadline, -force and -no-deadline may be given")
	case *deadline <= 0 && !*force && !*noDeadline:
		return bad("The -deadline must be positive; use -force to stop allocations at once, or -no-deadline to wait however long it takes")
	}
	a := &drainArgs{enable: *enable, disable: *disable, monitor: *monitor, detach: *detach, self: *self,
		yes: *yes, verbose: c.verbose, node: c.Arg(0), message: *message}
	if *enable {
		a.spec = &api.DrainSpec{Deadline: *deadline, IgnoreSystemJobs: *ignoreSystem}
		switch {
		case *force:
			a.spec.Deadline = -1
		case *noDeadline:
			a.spec.Deadline = 0
		}
		// Given with a spec, MarkEligible makes the node eligible when
		// the drain completes: only when asked with -keep-ineligible=false.
		a.markEligible = c.flagWasSet("keep-ineligible") && !*keepIneligible
	} else {
		a.markEligible = !*keepIneligible
	}
	return a, 0, true
}

func nodeDrain(m *Meta, args []string) int {
	// Whether a <node> is given depends on -self, so parseDrainArgs checks
	// the count with the other combinations.
	c := m.cmdLine("node drain", nodeDrainHelp, anyArgs).withVerbose()
	a, code, ok := parseDrainArgs(c, args)
	if !ok {
		return code
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	var nodeID string
	if a.self {
		var err error
		if nodeID, err = selfNodeID(client); err != nil {
			return m.errorf("Error finding the local node: %v", err)
		}
	} else {
		var code int
		var ok bool
		if nodeID, code, ok = c.resolve(client, nodeKind, a.node); !ok {
			return code
		}
	}
	if a.monitor {
		return m.withInterrupt(func() int { return newDrainMonitor(m, client, nodeID, a.verbose).run() })
	}
	if nodeID != a.node && !a.self && !a.yes {
		action := "enable"
		if a.disable {
			action = "disable"
		}
		if !m.confirm("Are you sure you want to " + action + ` drain mode for node "` + nodeID + `"?`) {
			m.out("Canceling drain strategy change")
			return 0
		}
	}

	req := &api.NodeUpdateDrainRequest{DrainSpec: a.spec, MarkEligible: a.markEligible}
	if a.message != "" {
		req.Meta = map[string]string{"message": a.message}
	}
	if _, err := client.Nodes().UpdateDrainOpts(nodeID, req, nil); err != nil {
		return m.errorf("Error updating drain specification: %v", err)
	}
	if a.disable {
		m.out("Node %q drain strategy unset", nodeID)
		return 0
	}
	m.out("Node %q drain strategy set", nodeID)
	if a.detach {
		return 0
	}
	return m.withInterrupt(func() int { return newDrainMonitor(m, client, nodeID, a.verbose).run() })
}

// selfNodeID is the client node of the agent the CLI talks to.
func selfNodeID(client *api.Client) (string, error) {
	self, err := client.Agent().Self()
	if err != nil {
		return "", fmt.Errorf("querying the agent for its node: %w", err)
	}
	id := self.Stats["client"]["node_id"]
	if id == "" {
		return "", fmt.Errorf("the agent runs no client, so -self names no node: give the node's ID instead")
	}
	return id, nil
}

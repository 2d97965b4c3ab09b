package nomad

import (
	"fmt"
	"strconv"
	"time"

	"github.com/drover-sched/drover/nomad/heartbeat"
	"github.com/drover-sched/drover/structs"
)

// UpdateDrain starts or stops draining a node. A draining node is
// ineligible for new work at once (the same raft entry); moving its
// allocations is the leader's drainer's job (nomad/drainer), which reads
// the drain strategy from state, so a drain started here survives a leader
// change. Stopping a drain can mark the node eligible again. With a drain
// spec, MarkEligible asks for the node to be made eligible when the drain
// completes (by default it stays ineligible).
func (n *Node) UpdateDrain(args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateDrain", args, args, reply); done {
		return err
	}
	if _, err := n.srv.allowNode(args, true); err != nil {
		return err
	}
	if err := validateDrainMeta(args.Meta); err != nil {
		return err
	}
	st := n.srv.State()
	node, err := lookupNode(st, args.NodeID)
	if err != nil {
		return err
	}
	now := n.srv.Now()
	req := &structs.NodeUpdateDrainRequest{
		NodeID: node.ID, MarkEligible: args.MarkEligible, UpdatedAt: now.Unix(), Meta: args.Meta,
		AccessorID: n.srv.accessorFor(args), WriteRequest: args.WriteRequest,
	}
	if args.DrainStrategy != nil {
		if args.DrainStrategy.Deadline < -1 {
			return errBadRequest("drain deadline must be >= 0 (or -1 to force), got %s", args.DrainStrategy.Deadline)
		}
		d := structs.DrainStrategy{DrainSpec: args.DrainStrategy.DrainSpec, MarkEligibleOnComplete: args.MarkEligible}
		d.StartedAt = now
		if node.DrainStrategy != nil {
			// Changing a running drain keeps when it started.
			d.StartedAt = node.DrainStrategy.StartedAt
		}
		switch {
		case d.Deadline > 0:
			d.ForceDeadline = now.Add(d.Deadline)
		case d.Deadline < 0:
			d.ForceDeadline = now // -force: the deadline is now
		}
		req.DrainStrategy = &d
		req.MarkEligible = false
		msg := "Node drain strategy set"
		if node.DrainStrategy != nil {
			msg = "Node drain strategy updated"
		}
		req.NodeEvent = &structs.NodeEvent{Message: msg, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now,
			Details: drainEventDetails(&d)}
	} else {
		req.NodeEvent = &structs.NodeEvent{Message: "Node drain strategy cleared", Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
	}
	idx, _, err := n.srv.raftApply(structs.NodeUpdateDrainRequestType, req)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = idx
	reply.Index = idx
	return nil
}

// drainEventDetails describes a drain strategy in a node event.
func drainEventDetails(d *structs.DrainStrategy) map[string]string {
	deadline := "none"
	switch {
	case d.Deadline < 0:
		deadline = "force"
	case d.Deadline > 0:
		deadline = d.ForceDeadline.UTC().Format(time.RFC3339)
	}
	return map[string]string{"deadline": deadline, "ignore_system": strconv.FormatBool(d.IgnoreSystemJobs)}
}

// UpdateEligibility marks a node eligible or ineligible for new work. A
// draining node cannot be made eligible.
func (n *Node) UpdateEligibility(args *structs.NodeUpdateEligibilityRequest, reply *structs.NodeEligibilityUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateEligibility", args, args, reply); done {
		return err
	}
	if _, err := n.srv.allowNode(args, true); err != nil {
		return err
	}
	switch args.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return errBadRequest("eligibility %q must be %q or %q", args.Eligibility, structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
	}
	st := n.srv.State()
	node, err := lookupNode(st, args.NodeID)
	if err != nil {
		return err
	}
	if node.DrainStrategy != nil && args.Eligibility == structs.NodeSchedulingEligible {
		return errBadRequest("node %s is draining; stop the drain before marking it eligible", node.ID)
	}
	if node.SchedulingEligibility == args.Eligibility {
		reply.NodeModifyIndex = node.ModifyIndex
		reply.Index = node.ModifyIndex
		return nil
	}
	now := n.srv.Now()
	req := &structs.NodeUpdateEligibilityRequest{
		NodeID: node.ID, Eligibility: args.Eligibility, UpdatedAt: now.Unix(),
		NodeEvent:    &structs.NodeEvent{Message: fmt.Sprintf("Node marked as %s for scheduling", args.Eligibility), Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now},
		WriteRequest: args.WriteRequest,
	}
	idx, _, err := n.srv.raftApply(structs.NodeUpdateEligibilityRequestType, req)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = idx
	reply.Index = idx
	return nil
}

// Deregister removes a node. Its allocations are marked lost by the evals
// this creates.
func (n *Node) Deregister(args *structs.NodeDeregisterRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.Deregister", args, args, reply); done {
		return err
	}
	if _, err := n.srv.allowNode(args, true); err != nil {
		return err
	}
	st := n.srv.State()
	node, err := lookupNode(st, args.NodeID)
	if err != nil {
		return err
	}
	allocs, err := st.AllocsByNode(nil, node.ID)
	if err != nil {
		return err
	}
	now := n.srv.Now()
	down := &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusDown, UpdatedAt: now.Unix(), Evals: heartbeat.NodeEvals(node, allocs, now)}
	if _, _, err := n.srv.raftApply(structs.NodeUpdateStatusRequestType, down); err != nil {
		return err
	}
	idx, _, err := n.srv.raftApply(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeID: node.ID})
	if err != nil {
		return err
	}
	if n.srv.nodeHeartbeats() != nil {
		n.srv.nodeHeartbeats().Clear(node.ID)
	}
	reply.Index = idx
	return nil
}

// Evaluate creates evals for every job with allocations on the node and
// every system job, so the scheduler looks at the node afresh.
func (n *Node) Evaluate(args *structs.NodeEvaluateRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.Evaluate", args, args, reply); done {
		return err
	}
	if _, err := n.srv.allowNode(args, true); err != nil {
		return err
	}
	node, err := lookupNode(n.srv.State(), args.NodeID)
	if err != nil {
		return err
	}
	evals, _, err := n.nodeJobEvals(node, n.srv.Now())
	if err != nil {
		return err
	}
	reply.EvalIDs = []string{}
	if len(evals) == 0 {
		return nil
	}
	idx, _, err := n.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	if err != nil {
		return err
	}
	for _, e := range evals {
		reply.EvalIDs = append(reply.EvalIDs, e.ID)
	}
	reply.EvalCreateIndex, reply.Index = idx, idx
	return nil
}

// Bounds of a drain request's meta, kept in the node's LastDrain and so
// in every copy of the node the servers hold and send.
const (
	maxDrainMetaKeys       = 32
	maxDrainMetaKeyBytes   = 128
	maxDrainMetaValueBytes = 1024
)

// validateDrainMeta refuses drain meta beyond its bounds, naming the key.
func validateDrainMeta(meta map[string]string) error {
	if len(meta) > maxDrainMetaKeys {
		return errBadRequest("drain Meta has %d keys; at most %d are kept", len(meta), maxDrainMetaKeys)
	}
	for k, v := range meta {
		if k == "" || len(k) > maxDrainMetaKeyBytes {
			return errBadRequest("drain Meta key %.40q must be 1 to %d bytes, got %d", k, maxDrainMetaKeyBytes, len(k))
		}
		if len(v) > maxDrainMetaValueBytes {
			return errBadRequest("drain Meta[%q] is %d bytes; at most %d", k, len(v), maxDrainMetaValueBytes)
		}
	}
	return nil
}

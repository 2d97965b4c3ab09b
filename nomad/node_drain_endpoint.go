package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// UpdateDrain starts or stops draining a node. A draining node is
// ineligible for new work; stopping a drain can mark it eligible again.
func (n *Node) UpdateDrain(args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateDrain", args, args, reply); done {
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
	now := n.srv.Now()
	req := &structs.NodeUpdateDrainRequest{
		NodeID: node.ID, MarkEligible: args.MarkEligible, UpdatedAt: now.Unix(), Meta: args.Meta,
		WriteRequest: args.WriteRequest,
	}
	if args.DrainStrategy != nil {
		if args.DrainStrategy.Deadline < -1 {
			return errBadRequest("drain deadline must be >= 0 (or -1 to force), got %s", args.DrainStrategy.Deadline)
		}
		d := *args.DrainStrategy
		d.StartedAt = now
		if d.Deadline > 0 {
			d.ForceDeadline = now.Add(d.Deadline)
		}
		req.DrainStrategy = &d
		req.NodeEvent = &structs.NodeEvent{Message: "Node drain strategy set", Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
	} else {
		req.NodeEvent = &structs.NodeEvent{Message: "Node drain strategy cleared", Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
	}
	idx, _, err := n.srv.raftApply(structs.NodeUpdateDrainRequestType, req)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = idx
	reply.Index = idx
	if req.DrainStrategy == nil {
		return nil
	}
	// A drain moves the node's work elsewhere: schedule every job with an
	// alloc there, so the scheduler migrates them off the draining node.
	allocs, err := st.AllocsByNode(nil, node.ID)
	if err != nil {
		return err
	}
	evals := nodeEvals(node, allocs, now)
	for _, e := range evals {
		e.TriggeredBy = structs.EvalTriggerNodeDrain
	}
	if len(evals) == 0 {
		return nil
	}
	eidx, _, err := n.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	if err != nil {
		return err
	}
	for _, e := range evals {
		reply.EvalIDs = append(reply.EvalIDs, e.ID)
	}
	reply.EvalCreateIndex = eidx
	reply.Index = eidx
	return nil
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
	down := &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusDown, UpdatedAt: now.Unix(), Evals: nodeEvals(node, allocs, now)}
	if _, _, err := n.srv.raftApply(structs.NodeUpdateStatusRequestType, down); err != nil {
		return err
	}
	idx, _, err := n.srv.raftApply(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeID: node.ID})
	if err != nil {
		return err
	}
	if n.srv.heartbeats != nil {
		n.srv.heartbeats.clear(node.ID)
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

package nomad

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// Node is the endpoint clients talk to (register, heartbeat, read their
// assignment, report allocation status) and operators read nodes through.
// A client's own calls are authenticated by its node secret
// (node_identity.go), an operator's by a token: node read to read nodes,
// node write to change them (node_drain_endpoint.go).
type Node struct {
	srv *Server
}

// Register creates or updates a node. A new node must bring a secret (a
// UUID, see structs.Node.Validate); a node that re-registers must present
// the secret it registered with, so knowing a node's ID is not enough to
// rewrite its attributes or resources.
func (n *Node) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	if err := n.srv.requireNodePeer("Node.Register", args); err != nil {
		return err
	}
	if done, err := n.srv.forward("Node.Register", args, args, reply); done {
		return err
	}
	if args.Node == nil {
		return errBadRequest("node is missing")
	}
	node := args.Node.Copy()
	if node.Status == "" {
		node.Status = structs.NodeStatusInit
	}
	node.Canonicalize()
	if err := node.Validate(); err != nil {
		return errBadRequest("%v", err)
	}
	class, err := feasible.ComputeClass(node)
	if err != nil {
		return err
	}
	node.ComputedClass = class

	// Hold the node's status lock until its timer is armed, so a missed
	// heartbeat being invalidated cannot overwrite this registration.
	unlock := n.srv.heartbeats.lockNode(node.ID)
	defer unlock()
	st := n.srv.State()
	existing, err := st.NodeByID(nil, node.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		if err := existing.CheckSecret(node.SecretID); err != nil {
			return fmt.Errorf("%w (a client that lost its secret-id file cannot take its node back: purge the node with PUT /v1/node/%s/purge, then restart the client)", err, node.ID)
		}
	}
	now := n.srv.Now()
	node.StatusUpdatedAt = now.Unix()
	msg := "Node registered"
	if existing != nil {
		msg = "Node re-registered"
	}
	node.AddEvent(&structs.NodeEvent{Message: msg, Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now})

	idx, _, err := n.srv.raftApply(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node, WriteRequest: args.WriteRequest})
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = idx
	// A node that is (again) ready may be able to run system jobs, and its
	// old allocs may need a decision.
	if node.Status == structs.NodeStatusReady && (existing == nil || existing.Status != structs.NodeStatusReady) {
		if err := n.createNodeEvals(node, now, reply); err != nil {
			return err
		}
	}
	return n.heartbeatReply(node.ID, reply)
}

// heartbeatReply arms the node's timer and fills the TTL and server list.
// The caller holds the node's status lock.
func (n *Node) heartbeatReply(nodeID string, reply *structs.NodeUpdateResponse) error {
	// The node beating now may not have a timer yet (a new registration).
	numNodes := n.srv.heartbeats.tracked()
	if !n.srv.heartbeats.armed(nodeID) {
		numNodes++
	}
	reply.HeartbeatTTL = n.srv.heartbeats.resetTTL(nodeID, numNodes)
	reply.NumNodes = int32(numNodes)
	reply.LeaderRPCAddr, _ = n.srv.Leader()
	if cfg, _, err := n.srv.raftConfiguration(); err == nil {
		for _, s := range cfg.Servers {
			reply.Servers = append(reply.Servers, &structs.NodeServerInfo{RPCAdvertiseAddr: string(s.Address), Datacenter: n.srv.config.Datacenter})
		}
	}
	if reply.Index == 0 {
		reply.Index, _ = n.srv.State().LatestIndex()
	}
	n.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// createNodeEvals writes evals for the jobs with allocs on the node and for
// every system and sysbatch job.
func (n *Node) createNodeEvals(node *structs.Node, now time.Time, reply *structs.NodeUpdateResponse) error {
	st := n.srv.State()
	allocs, err := st.AllocsByNode(nil, node.ID)
	if err != nil {
		return err
	}
	evals := nodeEvals(node, allocs, now)
	seen := map[structs.NamespacedID]bool{}
	for _, e := range evals {
		seen[e.NamespacedJobID()] = true
	}
	it, err := st.Jobs(nil)
	if err != nil {
		return err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		job := raw.(*structs.Job)
		if job.Stop || (job.Type != structs.JobTypeSystem && job.Type != structs.JobTypeSysBatch) || seen[job.NamespacedID()] {
			continue
		}
		evals = append(evals, &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
			TriggeredBy: structs.EvalTriggerNodeUpdate, JobID: job.ID, NodeID: node.ID,
			Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		})
	}
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
	reply.EvalCreateIndex = idx
	reply.Index = idx
	return nil
}

// UpdateStatus is the heartbeat (status ready from a client), and the way
// a client changes its own node's status. Like every call a client makes
// for itself it carries the node's secret: without it, anyone could mark a
// node down (its work replaced) or keep a dead node's timer alive. The
// servers' own status changes (down, disconnected on a missed TTL) do not
// come through here. A heartbeat that does not change the status writes
// nothing to raft: it only re-arms the node's timer.
//
// The node's status lock is held from reading its status until its timer
// is re-armed. The heartbeater's invalidate holds the same lock from
// seeing the timer expired until down or disconnected has committed, so
// either this heartbeat re-arms first and the invalidation stands down, or
// the invalidation commits first and this heartbeat reads the new status
// and writes ready again (with node-update evals), as for any node that
// comes back.
func (n *Node) UpdateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	if err := n.srv.requireNodePeer("Node.UpdateStatus", args); err != nil {
		return err
	}
	if done, err := n.srv.forward("Node.UpdateStatus", args, args, reply); done {
		return err
	}
	if !structs.ValidNodeStatus(args.Status) {
		return errBadRequest("status %q is not one of initializing, ready, down, disconnected", args.Status)
	}
	if args.NodeID == "" {
		return errBadRequest("node ID is missing")
	}
	h := n.srv.heartbeats
	unlock := h.lockNode(args.NodeID)
	defer unlock()
	st := n.srv.State()
	node, err := authenticateNode(st, args.NodeID, args.SecretID)
	if err != nil {
		return err
	}
	now := n.srv.Now()
	if node.Status != args.Status {
		req := &structs.NodeUpdateStatusRequest{
			NodeID: node.ID, Status: args.Status, UpdatedAt: now.Unix(),
			NodeEvent: &structs.NodeEvent{Message: fmt.Sprintf("Node status %s -> %s", node.Status, args.Status), Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now},
		}
		idx, _, err := n.srv.raftApply(structs.NodeUpdateStatusRequestType, req)
		if err != nil {
			return err
		}
		reply.NodeModifyIndex = idx
		reply.Index = idx
		if args.Status == structs.NodeStatusReady {
			updated := node.Copy()
			updated.Status = args.Status
			if err := n.createNodeEvals(updated, now, reply); err != nil {
				return err
			}
		}
	}
	switch args.Status {
	case structs.NodeStatusDown:
		h.clear(node.ID)
		return nil
	case structs.NodeStatusDisconnected:
		// Down once its disconnect window passes without a heartbeat.
		h.armDisconnected(node.ID)
		return nil
	}
	return n.heartbeatReply(node.ID, reply)
}

// GetClientAllocs is a client's assignment: a blocking query over the
// allocs of its node (whose ID and secret it must send) that answers with
// each alloc's AllocModifyIndex. It
// only wakes when this node's allocs change, so a busy cluster does not wake
// every client for every placement.
//
// The answer's index is the highest AllocModifyIndex of the node's allocs,
// or the index at which garbage collection last deleted one of them if
// that is newer. Without the second, deleting the alloc with the highest
// index would make the answer go back in time: a client refuses an older
// answer (and backs off), and a client blocked on the query would not
// learn of the deletion at all.
func (n *Node) GetClientAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeClientAllocsResponse) error {
	if err := n.srv.requireNodePeer("Node.GetClientAllocs", args); err != nil {
		return err
	}
	if done, err := n.srv.forward("Node.GetClientAllocs", args, args, reply); done {
		return err
	}
	if _, err := authenticateNode(n.srv.State(), args.NodeID, args.SecretID); err != nil {
		return err
	}
	return n.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByNode(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		deleted, err := st.NodeAllocsDeletedIndex(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Allocs = make(map[string]uint64, len(allocs))
		max := deleted
		for _, a := range allocs {
			reply.Allocs[a.ID] = a.AllocModifyIndex
			if a.AllocModifyIndex > max {
				max = a.AllocModifyIndex
			}
		}
		return max, nil
	})
}

// UpdateAlloc takes a client's batch of allocation status reports. The
// client reports as its node (NodeID and SecretID) and only about
// allocations placed on that node: one foreign allocation refuses the whole
// batch, and nothing changes. It is refused unless the node is ready, so a
// client coming back from a disconnect heartbeats first (the node is ready
// again) and only then reports: the order the reconnect logic depends on.
// Only client-owned fields are taken, transitions are checked, and the
// batch is one raft entry with the evals it triggers: reschedule evals for
// failed allocs and a reconnect eval for allocs reported after being
// unknown.
func (n *Node) UpdateAlloc(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	if err := n.srv.requireNodePeer("Node.UpdateAlloc", args); err != nil {
		return err
	}
	if done, err := n.srv.forward("Node.UpdateAlloc", args, args, reply); done {
		return err
	}
	st := n.srv.State()
	node, err := authenticateNode(st, args.NodeID, args.SecretID)
	if err != nil {
		return err
	}
	if len(args.Alloc) == 0 {
		return errBadRequest("no allocations to update")
	}
	if node.Status != structs.NodeStatusReady {
		// Logged at WARN because it is the observable half of the
		// reconnect ordering: a client back from a partition whose report
		// overtakes its first heartbeat is refused here, and operators
		// (and the e2e partition tests) look for this line.
		n.srv.logger.Warn("refused alloc update from a node that has not heartbeated since it was marked not ready",
			"node_id", node.ID, "node_status", node.Status, "allocs", len(args.Alloc))
		return fmt.Errorf("node %s is %s, heartbeat first: %w", node.ID, node.Status, structs.ErrNodeNotReady)
	}
	now := n.srv.Now()
	evals := map[structs.NamespacedID]*structs.Evaluation{}
	updates := make([]*structs.Allocation, 0, len(args.Alloc))
	for _, upd := range args.Alloc {
		existing, err := st.AllocByID(nil, upd.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue // garbage collected meanwhile
		}
		if existing.NodeID != node.ID {
			return errBadRequest("alloc %s is placed on node %s, not on %s: a node may report only its own allocations, so the batch was refused whole", upd.ID, existing.NodeID, node.ID)
		}
		if upd.NodeID != "" && upd.NodeID != node.ID {
			return errBadRequest("alloc %s: the update names node %s, but node %s reports it", upd.ID, upd.NodeID, node.ID)
		}
		if err := structs.ValidateClientTransition(structs.ActorClient, existing.ClientStatus, upd.ClientStatus); err != nil {
			if existing.ClientTerminalStatus() {
				continue // a late report about a finished alloc changes nothing
			}
			return errBadRequest("alloc %s: %v", upd.ID, err)
		}
		u := &structs.Allocation{
			ID: upd.ID, NodeID: existing.NodeID, ClientStatus: upd.ClientStatus, ClientDescription: upd.ClientDescription,
			TaskStates: upd.TaskStates, DeploymentStatus: upd.DeploymentStatus, NetworkStatus: upd.NetworkStatus,
		}
		updates = append(updates, u)
		trigger := ""
		switch {
		case existing.NeedsToReconnect() && upd.ClientStatus != structs.AllocClientStatusUnknown:
			trigger = structs.EvalTriggerReconnect
		case upd.ClientStatus == structs.AllocClientStatusFailed && existing.ClientStatus != structs.AllocClientStatusFailed && !existing.ServerTerminalStatus():
			trigger = structs.EvalTriggerRetryFailedAlloc
		case upd.ClientStatus == structs.AllocClientStatusComplete && existing.ClientStatus != structs.AllocClientStatusComplete &&
			!existing.ServerTerminalStatus() && existing.Job != nil &&
			(existing.Job.Type == structs.JobTypeService || existing.Job.Type == structs.JobTypeSystem):
			// A service or system alloc finished although the servers
			// still want it running (its client fenced itself after losing
			// the servers, say): the job is short of its count until a
			// scheduler pass replaces it. Finished batch work is not.
			trigger = structs.EvalTriggerAllocStop
		}
		if trigger != "" && existing.Job != nil {
			key := existing.NamespacedJobID()
			if _, ok := evals[key]; !ok {
				job, _ := st.JobByID(nil, existing.Namespace, existing.JobID)
				if job == nil {
					job = existing.Job
				}
				evals[key] = &structs.Evaluation{
					ID: structs.GenerateUUID(), Namespace: existing.Namespace, Priority: job.Priority, Type: job.Type,
					TriggeredBy: trigger, JobID: existing.JobID, NodeID: existing.NodeID,
					Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
				}
			}
		}
	}
	if len(updates) == 0 {
		reply.Index, _ = st.LatestIndex()
		return nil
	}
	req := &structs.AllocUpdateRequest{Alloc: updates, UpdatedAt: now.UnixNano(), WriteRequest: args.WriteRequest}
	for _, e := range evals {
		req.Evals = append(req.Evals, e)
	}
	sort.Slice(req.Evals, func(i, j int) bool { return req.Evals[i].JobID < req.Evals[j].JobID })
	idx, _, err := n.srv.raftApply(structs.AllocClientUpdateRequestType, req)
	if err != nil {
		return err
	}
	reply.Index = idx
	return nil
}

// List returns node stubs, filtered by ID prefix.
func (n *Node) List(args *structs.NodeListRequest, reply *structs.NodeListResponse) error {
	if done, err := n.srv.forward("Node.List", args, args, reply); done {
		return err
	}
	if _, err := n.srv.allowNode(args, false); err != nil {
		return err
	}
	return n.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		it, err := st.Nodes(ws)
		if err != nil {
			return 0, err
		}
		out := []*structs.NodeListStub{}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			node := raw.(*structs.Node)
			if strings.HasPrefix(node.ID, args.Prefix) {
				out = append(out, node.Stub())
			}
		}
		if reply.Nodes, err = nodeStubPager.page(&args.QueryOptions, &reply.QueryMeta, out); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableNodes), nil
	})
}

// GetNode returns one node, without its secret: the answer may reach
// anyone who can reach the RPC port, and the node itself knows its secret.
func (n *Node) GetNode(args *structs.NodeSpecificRequest, reply *structs.SingleNodeResponse) error {
	if done, err := n.srv.forward("Node.GetNode", args, args, reply); done {
		return err
	}
	if _, err := n.srv.allowNode(args, false); err != nil {
		return err
	}
	return n.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		node, err := st.NodeByID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Node = node.Sanitize()
		if node != nil {
			return node.ModifyIndex, nil
		}
		return maxIndex(st, state.TableNodes), nil
	})
}

// GetAllocs returns the allocations on a node: it needs node read, and
// answers only the allocations of namespaces where the token has
// read-job, as Nomad does.
func (n *Node) GetAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	if done, err := n.srv.forward("Node.GetAllocs", args, args, reply); done {
		return err
	}
	aclObj, err := n.srv.allowNode(args, false)
	if err != nil {
		return err
	}
	return n.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByNode(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		if reply.Allocs, err = allocPager(allocKey).page(&args.QueryOptions, &reply.QueryMeta, readable(aclObj, allocs)); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableAllocs), nil
	})
}

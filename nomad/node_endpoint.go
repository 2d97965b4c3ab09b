package nomad

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/yamux"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/heartbeat"
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
	srv nodeServer
}

// nodeServer is what Node uses of the server: besides the shared pieces,
// the heartbeat timers, the alloc-change notices of Node.WatchAllocs, the
// raft configuration it answers clients with, and this server's region
// and datacenter.
type nodeServer interface {
	rpcForwarder
	nodePeerChecker
	nodeChecker
	blockingQuerier
	queryMetaSetter
	stateReader
	Now() time.Time
	raftApplier
	Leader() (string, string)
	Logger() hclog.Logger
	accessorFor(info structs.RPCInfo) string
	raftConfiguration() (raft.Configuration, uint64, error)
	nodeHeartbeats() nodeHeartbeats
	allocWatches() allocWatches
	rpcMetrics() rpcMetrics
	region() string
	datacenter() string
}

// nodeHeartbeats is the heartbeat manager's side of a node's calls
// (heartbeat.Heartbeater).
type nodeHeartbeats interface {
	LockNode(nodeID string) func()
	Tracked() int
	Armed(nodeID string) bool
	ResetTTL(nodeID string, numNodes int) time.Duration
	Clear(nodeID string)
	ArmDisconnected(nodeID string)
}

// allocWatches registers a node's session for alloc-change notices
// (allocNotifier).
type allocWatches interface {
	register(nodeID string, sess *yamux.Session, index uint64, current func() (uint64, error)) (uint64, error)
}

// rpcMetrics records an RPC's timing.
type rpcMetrics interface {
	MeasureSince(key []string, start time.Time)
}

// nodeHeartbeats is nil when the server has no heartbeat manager, as
// Node.Deregister checks.
func (s *Server) nodeHeartbeats() nodeHeartbeats {
	if s.heartbeats == nil {
		return nil
	}
	return s.heartbeats
}

func (s *Server) allocWatches() allocWatches { return s.allocNotices }
func (s *Server) rpcMetrics() rpcMetrics     { return s.metrics }
func (s *Server) region() string             { return s.config.Region }
func (s *Server) datacenter() string         { return s.config.Datacenter }

var _ nodeServer = (*Server)(nil)

// Register creates or updates a node. A new node must bring a secret (a
// UUID, see structs.Node.Validate); a node that re-registers must present
// the secret it registered with, so knowing a node's ID is not enough to
// rewrite its attributes or resources.
func (n *Node) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := nodeOnly(n.srv, "Node.Register", args, reply); done {
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
	unlock := n.srv.nodeHeartbeats().LockNode(node.ID)
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

	// A node that is (again) ready may be able to run system jobs, and its
	// old allocs may need a decision: the evals go in the same entry.
	var change nodeChange
	if node.Status == structs.NodeStatusReady && (existing == nil || existing.Status != structs.NodeStatusReady) {
		change = nodeBecomesReady
	}
	err = n.applyNodeStatus(node, change, now, reply, func(evals []*structs.Evaluation, readIndex uint64) (structs.MessageType, any) {
		return structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node, Evals: evals, EvalsReadIndex: readIndex, WriteRequest: args.WriteRequest}
	})
	if err != nil {
		return err
	}
	return n.heartbeatReply(node.ID, reply)
}

// readyNodeAttempts bounds how often a node becoming ready is written
// again because a system job changed between reading the jobs and the
// entry committing (fsm.ErrReadyNodeEvalsStale). Each retry reads a state
// that includes the refused entry's index, so only a job changed in that
// short window refuses it again; a client whose heartbeat still fails
// retries it.
const readyNodeAttempts = 5

// nodeChange is what a status write means for the node's work, and so
// which evals go with it.
type nodeChange int

const (
	// nodeStays: no evals (a write that changes nothing the scheduler
	// acts on, such as initializing).
	nodeStays nodeChange = iota
	// nodeBecomesReady: evals for its jobs and every system job.
	nodeBecomesReady
	// nodeGoesAway (down or disconnected, as its client says): evals for
	// the jobs of its live allocs, as for a missed heartbeat.
	nodeGoesAway
)

// statusChange is the nodeChange of a node taking status.
func statusChange(status string) nodeChange {
	switch status {
	case structs.NodeStatusReady:
		return nodeBecomesReady
	case structs.NodeStatusDown, structs.NodeStatusDisconnected:
		return nodeGoesAway
	}
	return nodeStays
}

// applyNodeStatus writes the entry mk builds, with the evals change calls
// for, and fills reply from it. The status and the evals are one entry,
// so a crash cannot leave a ready node without its system work, or a node
// that went away with its work wanted where it was. The caller holds the
// node's status lock.
func (n *Node) applyNodeStatus(node *structs.Node, change nodeChange, now time.Time, reply *structs.NodeUpdateResponse,
	mk func(evals []*structs.Evaluation, readIndex uint64) (structs.MessageType, any)) error {
	var err error
	for attempt := 0; attempt < readyNodeAttempts; attempt++ {
		var evals []*structs.Evaluation
		var readIndex uint64
		switch change {
		case nodeBecomesReady:
			if evals, readIndex, err = n.nodeJobEvals(node, now); err != nil {
				return err
			}
		case nodeGoesAway:
			allocs, err := n.srv.State().AllocsByNode(nil, node.ID)
			if err != nil {
				return err
			}
			evals = heartbeat.NodeEvals(node, allocs, now)
		}
		var idx uint64
		idx, _, err = n.srv.raftApply(mk(evals, readIndex))
		if errors.Is(err, fsm.ErrReadyNodeEvalsStale) {
			n.srv.Logger().Debug("reading a ready node's evals again", "node_id", node.ID, "attempt", attempt+1, "error", err)
			continue
		}
		if err != nil {
			return err
		}
		reply.NodeModifyIndex, reply.Index = idx, idx
		if len(evals) > 0 {
			reply.EvalCreateIndex = idx
			for _, e := range evals {
				reply.EvalIDs = append(reply.EvalIDs, e.ID)
			}
		}
		return nil
	}
	return fmt.Errorf("node %s: system jobs kept changing while it became ready; retry: %w", node.ID, err)
}

// heartbeatReply arms the node's timer and fills the TTL and server list.
// The caller holds the node's status lock.
func (n *Node) heartbeatReply(nodeID string, reply *structs.NodeUpdateResponse) error {
	// The node beating now may not have a timer yet (a new registration).
	numNodes := n.srv.nodeHeartbeats().Tracked()
	if !n.srv.nodeHeartbeats().Armed(nodeID) {
		numNodes++
	}
	reply.HeartbeatTTL = n.srv.nodeHeartbeats().ResetTTL(nodeID, numNodes)
	reply.NumNodes = int32(numNodes)
	reply.LeaderRPCAddr, _ = n.srv.Leader()
	if cfg, _, err := n.srv.raftConfiguration(); err == nil {
		for _, s := range cfg.Servers {
			reply.Servers = append(reply.Servers, &structs.NodeServerInfo{RPCAdvertiseAddr: string(s.Address), Datacenter: n.srv.datacenter()})
		}
	}
	if reply.Index == 0 {
		reply.Index, _ = n.srv.State().LatestIndex()
	}
	n.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// nodeJobEvals are the evals of a node becoming ready (or re-evaluated):
// one for each job with allocs on the node and one for every system and
// sysbatch job, with their IDs and times chosen here so the FSM only
// stores them. It also returns the state index read before the jobs (see
// EvalsReadIndex): every job written up to it is among those read.
func (n *Node) nodeJobEvals(node *structs.Node, now time.Time) ([]*structs.Evaluation, uint64, error) {
	st := n.srv.State()
	readIndex, err := st.LatestIndex()
	if err != nil {
		return nil, 0, err
	}
	allocs, err := st.AllocsByNode(nil, node.ID)
	if err != nil {
		return nil, 0, err
	}
	evals := heartbeat.NodeEvals(node, allocs, now)
	seen := map[structs.NamespacedID]bool{}
	for _, e := range evals {
		seen[e.NamespacedJobID()] = true
	}
	it, err := st.Jobs(nil)
	if err != nil {
		return nil, 0, err
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
	return evals, readIndex, nil
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
	if done, err := nodeOnly(n.srv, "Node.UpdateStatus", args, reply); done {
		return err
	}
	defer n.srv.rpcMetrics().MeasureSince(keyClientUpdateStatus, time.Now())
	if !structs.ValidNodeStatus(args.Status) {
		return errBadRequest("status %q is not one of initializing, ready, down, disconnected", args.Status)
	}
	if args.NodeID == "" {
		return errBadRequest("node ID is missing")
	}
	h := n.srv.nodeHeartbeats()
	unlock := h.LockNode(args.NodeID)
	defer unlock()
	st := n.srv.State()
	node, err := authenticateNode(st, args.NodeID, args.SecretID)
	if err != nil {
		return err
	}
	now := n.srv.Now()
	if node.Status != args.Status {
		event := &structs.NodeEvent{Message: fmt.Sprintf("Node status %s -> %s", node.Status, args.Status), Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now}
		err := n.applyNodeStatus(node, statusChange(args.Status), now, reply, func(evals []*structs.Evaluation, readIndex uint64) (structs.MessageType, any) {
			return structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
				NodeID: node.ID, Status: args.Status, UpdatedAt: now.Unix(), NodeEvent: event, Evals: evals, EvalsReadIndex: readIndex,
			}
		})
		if err != nil {
			return err
		}
	}
	switch args.Status {
	case structs.NodeStatusDown:
		h.Clear(node.ID)
		return nil
	case structs.NodeStatusDisconnected:
		// Down once its disconnect window passes without a heartbeat.
		h.ArmDisconnected(node.ID)
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
	if done, err := nodeOnly(n.srv, "Node.GetClientAllocs", args, reply); done {
		return err
	}
	if _, err := authenticateNode(n.srv.State(), args.NodeID, args.SecretID); err != nil {
		return err
	}
	return n.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, index, err := clientAllocs(ws, st, args.NodeID, true)
		reply.Allocs = allocs
		return index, err
	})
}

// clientAllocs is a node's assignment (when withAllocs) and its alloc
// index: the highest AllocModifyIndex of its allocs, or the index at which
// garbage collection last deleted one, if newer (see GetClientAllocs).
// Node.WatchAllocs answers with the same index.
func clientAllocs(ws memdb.WatchSet, st *state.StateStore, nodeID string, withAllocs bool) (map[string]uint64, uint64, error) {
	allocs, err := st.AllocsByNode(ws, nodeID)
	if err != nil {
		return nil, 0, err
	}
	deleted, err := st.NodeAllocsDeletedIndex(ws, nodeID)
	if err != nil {
		return nil, 0, err
	}
	var assigned map[string]uint64
	if withAllocs {
		assigned = make(map[string]uint64, len(allocs))
	}
	max := deleted
	for _, a := range allocs {
		if withAllocs {
			assigned[a.ID] = a.AllocModifyIndex
		}
		if a.AllocModifyIndex > max {
			max = a.AllocModifyIndex
		}
	}
	return assigned, max, nil
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
//
// Each report's AllocModifyIndex is the version of the alloc it is based
// on. A report based on a version older than the servers' latest change
// to the alloc is ignored (structs.Allocation.StaleClientReport), here and
// again when the entry applies: it cannot undo an unknown mark, a stop or
// a reconnect decision the client had not seen. A report without one
// (clients of earlier releases) is taken as before.
func (n *Node) UpdateAlloc(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := nodeOnly(n.srv, "Node.UpdateAlloc", args, reply); done {
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
		n.srv.Logger().Warn("refused alloc update from a node that has not heartbeated since it was marked not ready",
			"node_id", node.ID, "node_status", node.Status, "allocs", len(args.Alloc))
		return fmt.Errorf("node %s is %s, heartbeat first: %w", node.ID, node.Status, structs.ErrNodeNotReady)
	}
	// The early refusals only: what the reports change, and which
	// evaluations they need, the FSM decides once (clientreport).
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
		if existing.StaleClientReport(upd) {
			// Made before the client saw the servers' latest change; it
			// reports again once it has read that version.
			n.srv.Logger().Debug("ignoring an alloc report based on an older version", "alloc_id", upd.ID,
				"report_based_on", upd.AllocModifyIndex, "alloc_modify_index", existing.AllocModifyIndex)
			continue
		}
		updates = append(updates, &structs.Allocation{
			ID: upd.ID, NodeID: existing.NodeID, ClientStatus: upd.ClientStatus, ClientDescription: upd.ClientDescription,
			TaskStates: upd.TaskStates, DeploymentStatus: upd.DeploymentStatus, NetworkStatus: upd.NetworkStatus,
			AllocModifyIndex: upd.AllocModifyIndex, // the basis, checked again when the entry applies
		})
	}
	if len(updates) == 0 {
		reply.Index, _ = st.LatestIndex()
		return nil
	}
	req := &structs.AllocUpdateRequest{Alloc: updates, UpdatedAt: n.srv.Now().UnixNano(), WriteRequest: args.WriteRequest}
	return applyIndexed(n.srv, structs.AllocClientUpdateRequestType, req, &reply.Index)
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

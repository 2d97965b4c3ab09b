package fsm

import (
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// FSM applies committed raft entries to the state store. Every entry is one
// message-type byte followed by a msgpack-encoded request (nomad/raftlog).
// Apply is deterministic: handlers use only the raft index and values in
// the entry (IDs, times) — never the clock or a random source — so every
// server ends with the same state.
//
// Apply is also atomic: every entry changes the state store in exactly one
// write transaction (state.StateStore.Write, or a write method that is one
// transaction). An entry that fails part way leaves nothing behind, so
// every server fails it the same way, and readers (blocking queries,
// snapshots, the scheduler) never see half of one: a node marked down
// without the evals that replace its work, say.
//
// On the leader, applying some entries also has side effects outside the
// state store (enqueueing evals, unblocking capacity). Those go through
// Hooks, which are no-ops on followers, and run only after the entry's
// transaction committed, with what it committed.
type FSM struct {
	logger hclog.Logger
	hooks  Hooks

	mu    sync.RWMutex
	state *state.StateStore

	handlers map[structs.MessageType]applyFn

	// events receives the events of each applied entry (events.go);
	// nil publishes none. pendingChanges collects the entry's committed
	// changes until Apply publishes them. Only Apply writes the store in
	// a server; pendingMu is for tests that write it directly as well.
	events         EventSink
	pendingMu      sync.Mutex
	pendingChanges memdb.Changes

	// allocSink is told which nodes' alloc indexes each entry moved
	// (alloc_notices.go); nil tells nobody. Alloc-change notices
	// (server heap per node, issue 16).
	allocSink AllocSink
}

// applyFn applies one decoded entry at a raft index. The returned value is
// the raft future's Response: nil or an error.
type applyFn func(buf []byte, index uint64) any

// Hooks are the leader-only consequences of applying an entry. The server
// wires them to the eval broker and blocked evals; both ignore calls while
// disabled (on followers).
type Hooks interface {
	// EvalsUpserted is told of evals written by an entry: pending ones go to
	// the broker, blocked ones to BlockedEvals.
	EvalsUpserted(evals []*structs.Evaluation)
	// CapacityChanged is told that nodes of a class may have room now.
	CapacityChanged(nodeID, computedClass string, index uint64)
	// JobStopped is told a job was stopped or purged.
	JobStopped(namespace, jobID string)
	// JobUpserted is told of a job as stored by a register, so the
	// periodic dispatcher tracks, re-schedules or drops it.
	JobUpserted(job *structs.Job)
}

// NoHooks ignores every call: an FSM made with nil hooks, or one in a
// test that needs no leader, uses it.
type NoHooks struct{}

func (NoHooks) EvalsUpserted([]*structs.Evaluation)    {}
func (NoHooks) CapacityChanged(string, string, uint64) {}
func (NoHooks) JobStopped(string, string)              {}
func (NoHooks) JobUpserted(*structs.Job)               {}

// New returns an FSM over a fresh state store.
func New(logger hclog.Logger, hooks Hooks) (*FSM, error) {
	if hooks == nil {
		hooks = NoHooks{}
	}
	f := &FSM{logger: logger.Named("fsm"), hooks: hooks}
	st, err := f.newStateStore()
	if err != nil {
		return nil, err
	}
	f.state = st
	f.handlers = map[structs.MessageType]applyFn{
		structs.NodeRegisterRequestType:                 f.applyNodeRegister,
		structs.NodeDeregisterRequestType:               f.applyNodeDeregister,
		structs.NodeUpdateStatusRequestType:             f.applyNodeUpdateStatus,
		structs.NodeUpdateDrainRequestType:              f.applyNodeUpdateDrain,
		structs.NodeUpdateEligibilityRequestType:        f.applyNodeUpdateEligibility,
		structs.NodeBatchDeregisterRequestType:          f.applyNodeBatchDeregister,
		structs.JobRegisterRequestType:                  f.applyJobRegister,
		structs.JobDeregisterRequestType:                f.applyJobDeregister,
		structs.JobBatchDeregisterRequestType:           f.applyJobBatchDeregister,
		structs.JobStabilityRequestType:                 f.applyJobStability,
		structs.EvalUpdateRequestType:                   f.applyEvalUpdate,
		structs.EvalDeleteRequestType:                   f.applyEvalDelete,
		structs.AllocClientUpdateRequestType:            f.applyAllocClientUpdate,
		structs.ApplyPlanResultsRequestType:             f.applyPlanResults,
		structs.AllocUpdateDesiredTransitionRequestType: f.applyAllocDesiredTransition,
		structs.AllocStopRequestType:                    f.applyAllocStop,
		structs.DeploymentStatusUpdateRequestType:       f.applyDeploymentStatusUpdate,
		structs.DeploymentDeleteRequestType:             f.applyDeploymentDelete,
		structs.SchedulerConfigRequestType:              f.applySchedulerConfig,
		structs.GenericWriteRequestType:                 f.applyGenericWrite,
		structs.JobScaleRequestType:                     f.applyJobScale,
		structs.JobDispatchRequestType:                  f.applyJobDispatch,
		structs.ACLPolicyUpsertRequestType:              f.applyACLPolicyUpsert,
		structs.ACLPolicyDeleteRequestType:              f.applyACLPolicyDelete,
		structs.ACLTokenUpsertRequestType:               f.applyACLTokenUpsert,
		structs.ACLTokenDeleteRequestType:               f.applyACLTokenDelete,
		structs.ACLTokenBootstrapRequestType:            f.applyACLTokenBootstrap,
		structs.ServerSecretRequestType:                 f.applyServerSecret,

		// Deployment watcher (issue 13).
		structs.DeploymentPromoteRequestType:     f.applyDeploymentPromote,
		structs.DeploymentAllocHealthRequestType: f.applyDeploymentAllocHealth,

		// Native service registrations (issue 13, services).
		structs.ServiceRegistrationUpsertRequestType: f.applyServiceRegistrationUpsert,
		structs.ServiceRegistrationDeleteRequestType: f.applyServiceRegistrationDelete,

		// Node-down batching (issue 16, storm).
		structs.NodeBatchUpdateStatusRequestType: f.applyNodeBatchUpdateStatus,
	}
	return f, nil
}

// newStateStore is an empty store whose commits feed the event stream.
func (f *FSM) newStateStore() (*state.StateStore, error) {
	return state.NewStateStore(&state.StateStoreConfig{Logger: f.logger, OnChanges: f.collectChanges})
}

// State returns the current state store. It changes when a snapshot is
// restored, so callers must not keep it across a restore.
func (f *FSM) State() *state.StateStore {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state
}

// Apply implements raft.FSM.
//
// No entry's content may crash a server: a committed entry is in the log
// for good, and a panic would repeat on every start, losing the data dir.
// An entry of a type this server does not know, or one its handler cannot
// decode or apply, is logged and answered with an error instead. That is
// deterministic: every server runs the same code over the same bytes and
// fails the entry the same way, and the handler's transaction is aborted,
// so the entry changes nothing anywhere.
func (f *FSM) Apply(log *raft.Log) (resp any) {
	if log.Type != raft.LogCommand {
		return nil
	}
	msgType, ignoreUnknown, body, ok := raftlog.Split(log.Data)
	if !ok {
		return nil
	}
	h, ok := f.handlers[msgType]
	if !ok {
		if ignoreUnknown {
			f.logger.Warn("ignoring unknown message type", "type", uint8(msgType), "index", log.Index)
			return nil
		}
		err := fmt.Errorf("raft entry %d has unknown message type %d (written by a newer server?); it was not applied", log.Index, msgType)
		f.logger.Error("skipping raft entry", "index", log.Index, "error", err)
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("raft entry %d (%s) could not be applied and changed nothing: %v", log.Index, msgType, r)
			f.logger.Error("skipping raft entry", "index", log.Index, "type", msgType.String(), "error", err)
			resp = err
		}
	}()
	f.takeChanges()
	resp = h(body, log.Index)
	f.publishEvents(msgType, log.Index, len(log.Data))
	return resp
}

// decode unpacks an entry body. It panics on a body that does not decode,
// which Apply turns into the entry's error: handlers stay short, and every
// server refuses the same bytes the same way.
func decode(buf []byte, out any, t structs.MessageType) {
	if err := raftlog.Decode(buf, out); err != nil {
		panic(fmt.Sprintf("drover: failed to decode %s entry: %v", t, err))
	}
}

// Snapshot implements raft.FSM: a point-in-time copy streamed by Persist.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	snap, err := f.State().Snapshot()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{snap: snap}, nil
}

// Restore implements raft.FSM: it builds a new state store from the stream
// and swaps it in, abandoning the old one so blocking queries on it re-run.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	newState, err := f.newStateStore()
	if err != nil {
		return err
	}
	if err := restoreGuarded(rc, newState); err != nil {
		return err
	}
	f.mu.Lock()
	old := f.state
	f.state = newState
	events := f.events
	allocSink := f.allocSink
	f.mu.Unlock()
	old.Abandon()
	if events != nil {
		events.Reset()
	}
	if allocSink != nil {
		allocSink.Reset()
	}
	return nil
}

// restoreGuarded is restoreSnapshot that turns a panic on a malformed
// snapshot into an error: raft then tries an older snapshot or fails the
// start with it, rather than the process dying with no word of the file.
func restoreGuarded(r io.Reader, st *state.StateStore) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("restoring snapshot: it is malformed and was not restored: %v", p)
		}
	}()
	return restoreSnapshot(r, st)
}

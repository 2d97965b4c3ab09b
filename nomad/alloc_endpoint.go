package nomad

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Alloc reads allocations and stops them. Reads need read-job in the
// allocation's namespace (lists answer only those), stopping needs
// alloc-lifecycle; a client reading its own allocations is authenticated
// by its node secret instead.
type Alloc struct {
	srv allocServer
}

// allocServer is what Alloc uses of the server.
type allocServer interface {
	rpcForwarder
	nodePeerChecker
	namespaceChecker
	managementChecker
	blockingQuerier
	queryMetaSetter
	stateReader
	Now() time.Time
	raftApplier
}

var _ allocServer = (*Server)(nil)

// GetAllocs fetches allocations by ID. Clients call it for the allocs whose
// index moved; with MinQueryIndex set, the answer reflects at least that
// index, so a lagging server never hands a client an older assignment.
//
// A client reads as its node (NodeID and SecretID, checked first) and is
// answered only the allocations placed on that node: an ID of another
// node's allocation is answered as if it did not exist. Anyone else reads
// with a token, and is answered only the allocations of namespaces where
// it has read-job.
func (a *Alloc) GetAllocs(args *structs.AllocsGetRequest, reply *structs.AllocsGetResponse) error {
	if done, err := nodeOnly(a.srv, "Alloc.GetAllocs", args, reply); done {
		return err
	}
	asNode := args.NodeID != "" || args.SecretID != ""
	var aclObj *acl.ACL
	if asNode {
		if _, err := authenticateNode(a.srv.State(), args.NodeID, args.SecretID); err != nil {
			return err
		}
	} else {
		var err error
		if aclObj, err = a.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityReadJob); err != nil {
			return err
		}
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		out := make([]*structs.Allocation, 0, len(args.AllocIDs))
		var max uint64
		for _, id := range args.AllocIDs {
			alloc, err := st.AllocByID(ws, id)
			if err != nil {
				return 0, err
			}
			if alloc == nil || (asNode && alloc.NodeID != args.NodeID) ||
				(!asNode && !allowedIn(aclObj, alloc.Namespace, acl.NamespaceCapabilityReadJob)) {
				continue
			}
			out = append(out, alloc)
			if alloc.AllocModifyIndex > max {
				max = alloc.AllocModifyIndex
			}
		}
		page, err := allocPager(allocKey).page(&args.QueryOptions, &reply.QueryMeta, out)
		if err != nil {
			return 0, err
		}
		reply.Allocs = page
		if latest := maxIndex(st, state.TableAllocs); latest > max {
			max = latest
		}
		return max, nil
	})
}

// GetAlloc returns one allocation.
func (a *Alloc) GetAlloc(args *structs.AllocSpecificRequest, reply *structs.SingleAllocResponse) error {
	if done, err := a.srv.forward("Alloc.GetAlloc", args, args, reply); done {
		return err
	}
	aclObj, err := a.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		alloc, err := st.AllocByID(ws, args.AllocID)
		if err != nil {
			return 0, err
		}
		if alloc != nil && !allowedIn(aclObj, alloc.Namespace, acl.NamespaceCapabilityReadJob) {
			return 0, objectDenied("allocation", alloc.ID, alloc.Namespace, acl.NamespaceCapabilityReadJob)
		}
		reply.Alloc = alloc
		if alloc != nil {
			return alloc.ModifyIndex, nil
		}
		return maxIndex(st, state.TableAllocs), nil
	})
}

// List returns allocation stubs filtered by ID prefix and namespace, and
// to the namespaces where the token has read-job.
func (a *Alloc) List(args *structs.AllocListRequest, reply *structs.AllocListResponse) error {
	if done, err := a.srv.forward("Alloc.List", args, args, reply); done {
		return err
	}
	scope, err := listScopeFor(a.srv, args, &args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		it, err := st.Allocs(ws)
		if err != nil {
			return 0, err
		}
		list := collect(it, scope, func(a *structs.Allocation) (string, string) { return a.Namespace, a.ID })
		if reply.Allocations, err = stubs(&args.QueryOptions, &reply.QueryMeta, list); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableAllocs), nil
	})
}

// Stop asks for one allocation to be stopped and replaced (`alloc stop`).
// It needs alloc-lifecycle in the allocation's namespace.
func (a *Alloc) Stop(args *structs.AllocStopRequest, reply *structs.AllocStopResponse) error {
	if done, err := a.srv.forward("Alloc.Stop", args, args, reply); done {
		return err
	}
	aclObj, err := a.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityAllocLifecycle)
	if err != nil {
		return err
	}
	alloc, err := a.srv.State().AllocByID(nil, args.AllocID)
	if err != nil {
		return err
	}
	if alloc == nil {
		return fmt.Errorf("allocation %q: %w", args.AllocID, structs.ErrNotFound)
	}
	if !allowedIn(aclObj, alloc.Namespace, acl.NamespaceCapabilityAllocLifecycle) {
		return objectDenied("allocation", alloc.ID, alloc.Namespace, acl.NamespaceCapabilityAllocLifecycle)
	}
	now := a.srv.Now()
	job := alloc.Job
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: alloc.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerAllocStop, JobID: alloc.JobID, JobModifyIndex: job.JobModifyIndex,
		Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	req := &structs.AllocStopRequest{AllocID: alloc.ID, NoShutdownDelay: args.NoShutdownDelay, Eval: eval, WriteRequest: args.WriteRequest}
	idx, _, err := a.srv.raftApply(structs.AllocStopRequestType, req)
	if err != nil {
		return err
	}
	reply.EvalID = eval.ID
	reply.Index = idx
	return nil
}

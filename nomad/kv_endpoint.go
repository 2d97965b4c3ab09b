package nomad

import (
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// KV is a generic replicated key/value write and read. Nothing in Drover's
// scheduling uses it; it exists so operators and tests can check that a
// cluster replicates and survives failover without involving jobs. With
// ACLs on, both need a management token.
type KV struct {
	srv kvServer
}

// kvServer is what KV uses of the server.
type kvServer interface {
	rpcForwarder
	managementChecker
	raftApplier
	blockingQuerier
}

var _ kvServer = (*Server)(nil)

// Write stores a key through raft.
func (k *KV) Write(args *structs.GenericWriteRequest, reply *structs.GenericResponse) error {
	if done, err := k.srv.forward("KV.Write", args, args, reply); done {
		return err
	}
	if err := k.srv.allowManagement(args); err != nil {
		return err
	}
	if args.Key == "" {
		return errBadRequest("key must not be empty")
	}
	return applyIndexed(k.srv, structs.GenericWriteRequestType, args, &reply.Index)
}

// Read returns a key; with AllowStale any server answers from its copy.
func (k *KV) Read(args *structs.GenericReadRequest, reply *structs.GenericReadResponse) error {
	if done, err := k.srv.forward("KV.Read", args, args, reply); done {
		return err
	}
	if err := k.srv.allowManagement(args); err != nil {
		return err
	}
	return k.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		v, ok, err := st.KVGet(ws, args.Key)
		if err != nil {
			return 0, err
		}
		reply.Value, reply.Found = v, ok
		return maxIndex(st, state.TableKV), nil
	})
}

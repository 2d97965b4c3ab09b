package nomad

import (
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// WatchAllocs registers a node for one alloc-change notice (server heap
// per node, issue 16; see alloc_notices.go). The node authenticates as
// for GetClientAllocs. The server that takes the call keeps the session it
// arrived on and pushes the notice there, so the call is never forwarded:
// a forwarded registration could not reach the client, and one marked
// forwarded is refused. The answer comes at once with the node's current
// alloc index on this server; a client below it fetches straight away.
//
// A registration costs the server one small entry and replaces the node's
// previous one, so what a node can make a server hold is bounded.
func (n *Node) WatchAllocs(args *structs.NodeWatchAllocsRequest, reply *structs.NodeWatchAllocsResponse) error {
	if err := n.srv.requireNodePeer("Node.WatchAllocs", args); err != nil {
		return err
	}
	if args.Forwarded {
		return errBadRequest("Node.WatchAllocs is answered by the server the client is connected to and is never forwarded; send it without Forwarded")
	}
	if args.Region != "" && args.Region != n.srv.region() {
		return errBadRequest("Region %q is not this server's region %q; register with a server of the node's region", args.Region, n.srv.region())
	}
	sess, ok := rpcx.SessionFromContext(args.CallContext())
	if !ok {
		return errBadRequest("Node.WatchAllocs: %v; call it over an RPC connection (the agents' pool), or use the blocking Node.GetClientAllocs", rpcx.ErrNoSession)
	}
	st := n.srv.State()
	if _, err := authenticateNode(st, args.NodeID, args.SecretID); err != nil {
		return err
	}
	index, err := n.srv.allocWatches().register(args.NodeID, sess, args.Index, func() (uint64, error) {
		// The current store, read after the entry is in place (see
		// register): a snapshot restore may have replaced st.
		_, index, err := clientAllocs(nil, n.srv.State(), args.NodeID, false)
		return index, err
	})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

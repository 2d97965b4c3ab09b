package nomad

import "github.com/drover-sched/drover/structs"

// Some calls are for peers only: a worker's eval and plan calls and a
// server joining raft are for servers (serverOnly), a node's
// registration, status, allocations and services for client agents and
// servers (nodeOnly). Each begins the same way: refused unless a peer of
// that kind makes it, then sent to the leader when this server should not
// answer it, so a request from no such peer is refused here before it
// could be forwarded. They report whether the request is answered
// already; err is then the answer.

// serverOnlyForwarder is what serverOnly needs of an endpoint's server.
type serverOnlyForwarder interface {
	serverPeerChecker
	rpcForwarder
}

// nodeOnlyForwarder is what nodeOnly needs of an endpoint's server.
type nodeOnlyForwarder interface {
	nodePeerChecker
	rpcForwarder
}

// serverOnly begins a call only servers make.
func serverOnly(s serverOnlyForwarder, method string, args structs.RPCInfo, reply any) (bool, error) {
	return peerOnly(s.requireServer, s, method, args, reply)
}

// nodeOnly begins a call only client agents and servers make.
func nodeOnly(s nodeOnlyForwarder, method string, args structs.RPCInfo, reply any) (bool, error) {
	return peerOnly(s.requireNodePeer, s, method, args, reply)
}

func peerOnly(require func(string, structs.RPCInfo) error, f rpcForwarder, method string, args structs.RPCInfo, reply any) (bool, error) {
	if err := require(method, args); err != nil {
		return true, err
	}
	return f.forward(method, args, args, reply)
}

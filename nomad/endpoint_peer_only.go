package nomad

import "github.com/drover-sched/drover/structs"

// serverOnlyForwarder is what serverOnly needs of an endpoint's server.
type serverOnlyForwarder interface {
	serverPeerChecker
	rpcForwarder
}

// serverOnly is how the calls that only servers make begin (a worker's
// eval and plan calls, a server joining raft): refused unless another
// server or this one makes it, then sent to the leader when this server
// should not answer it. A request no server made is refused here, before
// it could be forwarded. It reports whether the request is answered
// already; err is then the answer.
func serverOnly(s serverOnlyForwarder, method string, args structs.RPCInfo, reply any) (bool, error) {
	if err := s.requireServer(method, args); err != nil {
		return true, err
	}
	return s.forward(method, args, args, reply)
}

// nodeOnlyForwarder is what nodeOnly needs of an endpoint's server.
type nodeOnlyForwarder interface {
	nodePeerChecker
	rpcForwarder
}

// nodeOnly is serverOnly for the calls a client agent makes (a node's
// registration, status, allocations and services): refused unless a
// client or a server makes it, then sent to the leader when this server
// should not answer it.
func nodeOnly(s nodeOnlyForwarder, method string, args structs.RPCInfo, reply any) (bool, error) {
	if err := s.requireNodePeer(method, args); err != nil {
		return true, err
	}
	return s.forward(method, args, args, reply)
}

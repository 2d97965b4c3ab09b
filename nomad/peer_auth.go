package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/structs"
)

// Who may call what, by the transport's word on who is calling.
//
// With mutual TLS and verify_server_hostname on, every RPC peer presented
// a certificate signed by the CA, and its name says its role:
// server.<region>.nomad or client.<region>.nomad. Three roles matter here:
//
//   - server endpoints (the workers' eval and plan calls, adding a raft
//     peer) are for servers only: a client certificate that could dequeue
//     evals or submit plans could place anything anywhere;
//   - node endpoints (register, heartbeat, read and report allocations)
//     are for client agents, and servers (which forward them);
//   - a request marked Forwarded claims a server already handled it (its
//     blocking-query limits were counted there, it is not forwarded
//     again), so only a server may send one.
//
// A call made in process (rpcx.Server.Call: this server's workers, its
// HTTP API) is the server itself. Without verify_server_hostname nothing
// here refuses anything: roles cannot be told apart, and ACL tokens are
// what gate users.
//
// The node check is one call at the top of each node endpoint, before it
// forwards; the server and forwarded checks are reached through
// requireServer and checkForwarded (server_secret.go), which also know
// the other proof a server has when certificate roles are not checked. A
// refusal wraps structs.ErrPermissionDenied and names the role needed.

// authorizeConn vets a connection to the RPC port once its type is known:
// with verify_server_hostname only a server certificate may speak raft.
// Raft trusts whoever reaches it (it would take a forged leader's log
// entries), so a refused peer's connection is closed before raft sees a
// byte of it.
func (s *Server) authorizeConn(t rpcx.ConnType, p rpcx.Peer) error {
	if t != rpcx.RPCRaft || !s.rolesChecked() || s.isServerPeer(p) {
		return nil
	}
	return fmt.Errorf("raft is only for servers (a certificate for %s); the peer %s", tlsutil.ServerName(s.config.Region), describeCert(p))
}

// callPeer is the peer a request arrived from.
func callPeer(info structs.RPCInfo) rpcx.Peer {
	p, _ := rpcx.PeerFromContext(info.CallContext())
	return p
}

// rolesChecked reports whether peers' certificate roles are enforced.
func (s *Server) rolesChecked() bool { return s.config.TLS.VerifyServerHostname() }

// isServerPeer reports whether p is this server (in process) or holds a
// verified server certificate of this region.
func (s *Server) isServerPeer(p rpcx.Peer) bool {
	return p.InProcess || tlsutil.IsServer(p.TLS, s.config.Region)
}

// requireServerPeer refuses a call to method unless it comes from a server.
func (s *Server) requireServerPeer(method string, info structs.RPCInfo) error {
	if !s.rolesChecked() {
		return nil
	}
	p := callPeer(info)
	if s.isServerPeer(p) {
		return nil
	}
	return fmt.Errorf("%w: %s may be called only by a server (a certificate for %s); the caller at %s %s",
		structs.ErrPermissionDenied, method, tlsutil.ServerName(s.config.Region), peerAddr(p), describeCert(p))
}

// requireNodePeer refuses a call to method unless it comes from a client
// agent or a server.
func (s *Server) requireNodePeer(method string, info structs.RPCInfo) error {
	if !s.rolesChecked() {
		return nil
	}
	p := callPeer(info)
	if s.isServerPeer(p) || tlsutil.IsClient(p.TLS, s.config.Region) {
		return nil
	}
	return fmt.Errorf("%w: %s may be called only by a client agent or a server (a certificate for %s or %s); the caller at %s %s",
		structs.ErrPermissionDenied, method, tlsutil.ClientName(s.config.Region), tlsutil.ServerName(s.config.Region), peerAddr(p), describeCert(p))
}

// checkForwardedPeer refuses a request marked Forwarded that does not come
// from a server.
func (s *Server) checkForwardedPeer(method string, info structs.RPCInfo) error {
	if !info.IsForwarded() || !s.rolesChecked() {
		return nil
	}
	p := callPeer(info)
	if s.isServerPeer(p) {
		return nil
	}
	return fmt.Errorf("%w: %s marked as forwarded may come only from a server (a certificate for %s); the caller at %s %s",
		structs.ErrPermissionDenied, method, tlsutil.ServerName(s.config.Region), peerAddr(p), describeCert(p))
}

func peerAddr(p rpcx.Peer) string {
	if p.Addr == nil {
		return "(unknown address)"
	}
	return p.Addr.String()
}

// describeCert says what certificate a refused peer presented.
func describeCert(p rpcx.Peer) string {
	switch {
	case p.TLS == nil:
		return "presented no certificate"
	case len(p.TLS.PeerCertificates) == 0:
		return "presented no certificate"
	default:
		return fmt.Sprintf("presented a certificate for %v", p.TLS.PeerCertificates[0].DNSNames)
	}
}

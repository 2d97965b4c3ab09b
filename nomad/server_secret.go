package nomad

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// Who is a server.
//
// Some endpoints are for servers only: the workers' eval and plan calls
// (Eval.Dequeue, Ack, Nack, Update, Create, Reblock, Plan.Submit) and
// Operator.RaftAddPeer. A caller of those could place anything anywhere or
// take over the raft configuration. A request marked Forwarded claims that
// a server already handled it (it is not forwarded again, and its
// blocking-query limits were counted where it arrived), so only a server
// may send one too.
//
// requireServer is the one check every server-only endpoint calls, and
// checkForwarded the one forward calls for every request. Without ACLs and
// without TLS certificate roles they refuse nothing (anyone who reaches
// the RPC port is trusted). With ACLs on, a caller is a server when:
//
//   - the call was made in this process with no remote caller behind it
//     (rpcx.Peer.InProcess with no Addr: the workers, the leader's loops,
//     a join run by this server), or
//   - it carries the cluster's server secret (structs.ServerSecret): as
//     its AuthToken when a server calls for itself, or as the ServerToken
//     of a request a server forwards for someone else.
//
// The secret is made once by the first leader with ACLs on, carried in a
// raft entry and replicated like any state; no endpoint answers it.
//
// With mutual TLS and certificate roles (verify_server_hostname), a call
// from another process is judged by its certificate instead
// (peer_auth.go): a server certificate is the proof, and the secret is
// neither needed nor enough.
//
// A server without state (one that was just started to join an existing
// cluster) has no secret yet, so with ACLs on and without TLS roles it
// cannot ask the leader to add it: run `drover server join <its address>`
// on a member of the cluster instead, which adds it from inside.

// bootstrapServerSecret makes the server secret if the cluster has none.
// The leader calls it on gaining leadership when ACLs are on. The random
// value is made here and carried in the raft entry; the FSM stores it
// only if no secret exists yet.
func (s *Server) bootstrapServerSecret() error {
	if !s.config.ACLEnabled {
		return nil
	}
	if cur, err := s.State().ServerSecret(); err != nil || cur != "" {
		return err
	}
	_, resp, err := s.raftApplyUntilShutdown(structs.ServerSecretRequestType, &structs.ServerSecretRequest{Secret: structs.GenerateUUID()})
	if err != nil {
		return err
	}
	if stored, _ := resp.(bool); stored {
		s.logger.Info("made the cluster's server secret, which servers use to prove themselves to each other while ACLs are on")
	}
	return nil
}

// retryServerSecret keeps trying to make the server secret, for a leader
// whose first attempt failed, until it succeeds or leadership ends.
func (s *Server) retryServerSecret(ctx context.Context) {
	for clock.Sleep(ctx, s.clock, 5*time.Second) {
		err := s.bootstrapServerSecret()
		if err == nil {
			return
		}
		s.logger.Error("making the server secret failed; retrying", "error", err)
	}
}

// serverSecret is the cluster's server secret, "" until this server has
// applied the entry that made it.
func (s *Server) serverSecret() string {
	sec, err := s.State().ServerSecret()
	if err != nil {
		s.logger.Error("reading the server secret", "error", err)
		return ""
	}
	return sec
}

// serverSecretWaitTimeout bounds how long a server waits for the server
// secret to reach it (a cluster that was just formed, with ACLs on) before
// it forwards a request or checks a forwarded one.
const serverSecretWaitTimeout = leaderWaitTimeout

// awaitServerSecret is serverSecret for a server that needs the secret
// now: with ACLs on, in the first moments of a cluster the leader is still
// making it or it has not replicated here yet, so this waits for it (up to
// serverSecretWaitTimeout, or until ctx ends) rather than send, or refuse,
// a request without it. It returns "" with ACLs off.
func (s *Server) awaitServerSecret(ctx context.Context) string {
	if !s.config.ACLEnabled {
		return s.serverSecret()
	}
	ctx, cancel := context.WithTimeout(ctx, serverSecretWaitTimeout)
	defer cancel()
	for {
		st := s.State()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		sec, err := st.ServerSecretWatch(ws)
		if err != nil {
			s.logger.Error("reading the server secret", "error", err)
			return ""
		}
		if sec != "" || ws.WatchCtx(ctx) != nil {
			return sec
		}
	}
}

// isServerSecret reports whether token is the cluster's server secret.
func (s *Server) isServerSecret(token string) bool {
	if token == "" {
		return false
	}
	return matchesSecret(s.serverSecret(), token)
}

func matchesSecret(sec, token string) bool {
	return sec != "" && token != "" && subtle.ConstantTimeCompare([]byte(sec), []byte(token)) == 1
}

// isOwnCall reports whether a request is this server's own work: made in
// process (rpcx.Server.Call) with no remote caller behind it. The HTTP
// API's calls are in process too, but they name the HTTP client (see
// command/agent's httpAPI.call), so they are not.
func isOwnCall(info structs.RPCInfo) bool {
	p, ok := rpcx.PeerFromContext(info.CallContext())
	return ok && p.InProcess && p.Addr == nil
}

// requireServer refuses a call to a server-only endpoint unless it comes
// from a server (see the top of this file). Every server-only endpoint
// calls it first, before it forwards.
func (s *Server) requireServer(method string, info structs.RPCInfo) error {
	if isOwnCall(info) {
		return nil
	}
	if s.rolesChecked() && !callPeer(info).InProcess {
		// The caller's certificate says whether it is a server.
		return s.requireServerPeer(method, info)
	}
	if !s.config.ACLEnabled {
		return nil
	}
	if token := info.RequestAuthToken(); token != "" && matchesSecret(s.awaitServerSecret(info.CallContext()), token) {
		return nil
	}
	return fmt.Errorf("%w: %s may be called only by a server (this call came from %s without the servers' secret)",
		structs.ErrPermissionDenied, method, callerAddr(info))
}

// checkForwarded refuses a request marked Forwarded that does not carry a
// forwarding server's proof. forward calls it for every request.
func (s *Server) checkForwarded(method string, info structs.RPCInfo) error {
	if !info.IsForwarded() || isOwnCall(info) {
		return nil
	}
	if s.rolesChecked() && !callPeer(info).InProcess {
		return s.checkForwardedPeer(method, info)
	}
	if !s.config.ACLEnabled {
		return nil
	}
	if matchesSecret(s.awaitServerSecret(info.CallContext()), info.RequestServerToken()) {
		return nil
	}
	return fmt.Errorf("%w: %s is marked as forwarded, which only a server may do (this call came from %s without the servers' secret)",
		structs.ErrPermissionDenied, method, callerAddr(info))
}

// signForwarded attaches this server's proof to a request it forwards: the
// server secret as its ServerToken, and as its AuthToken too when the
// request is this server's own work, so that it keeps a server's
// authority on the leader. It reports whether it had a secret to attach:
// a server that just joined, or a cluster just formed, may not have it
// yet (see forwardSigned).
func (s *Server) signForwarded(info structs.RPCInfo, sec string) bool {
	if sec == "" {
		return false
	}
	info.SetRequestServerToken(sec)
	if info.RequestAuthToken() == "" && isOwnCall(info) {
		info.SetRequestAuthToken(sec)
	}
	return true
}

// forwardSigned sends a request this server forwards through call, with
// this server's proof. Without a secret yet it sends the request as it
// is (a leader with ACLs off needs none), and only if the leader refuses
// it does it wait for the secret to reach it and send the request once
// more, so forwarding is never slowed where no proof is needed.
func (s *Server) forwardSigned(info structs.RPCInfo, call func() error) error {
	if s.signForwarded(info, s.serverSecret()) {
		return call()
	}
	err := call()
	if !s.config.ACLEnabled || !errors.Is(err, structs.ErrPermissionDenied) {
		return err
	}
	if !s.signForwarded(info, s.awaitServerSecret(info.CallContext())) {
		return err
	}
	return call()
}

// callerAddr names where a request came from, for refusals.
func callerAddr(info structs.RPCInfo) string {
	p, _ := rpcx.PeerFromContext(info.CallContext())
	if p.Addr == nil {
		return "an unknown address"
	}
	return p.Addr.String()
}

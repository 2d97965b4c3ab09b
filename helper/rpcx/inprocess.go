package rpcx

import (
	"context"
	"fmt"
)

// Call runs method in this process, as a remote call would run it: args
// are encoded and decoded into fresh arguments and the reply is encoded
// and decoded into reply, so neither side ever shares memory with the
// other (a handler may change its arguments, and replies may hold objects
// the server treats as immutable). The method sees a call context that
// carries ctx's values (a Peer set with WithPeer names who the call is made
// for; without one it is the process's own work) and ends when ctx does.
//
// An error the method returns comes back as a RemoteError, with its code,
// exactly as from a remote call, so callers handle both the same way.
//
// Why not loop back through the network: calls from the process's own HTTP
// API and workers would then share one multiplexed session with its stream
// limit, so a thousand held blocking queries from HTTP clients could leave
// no stream for anything else, workers included. In process, each call
// costs a goroutine of the caller's and nothing more, and what bounds
// them is the caller's own limits.
func (s *Server) Call(ctx context.Context, method string, args, reply any) error {
	svc, m, err := s.services.lookup(method)
	if err != nil {
		return NewRemoteError(err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	buf, err := Encode(args)
	if err != nil {
		return err
	}
	argp := m.newArgs()
	if err := Decode(buf, argp.Interface()); err != nil {
		return &RemoteError{Text: fmt.Sprintf("rpcx: decode %T: %v", argp.Interface(), err)}
	}
	peer, ok := PeerFromContext(ctx)
	if !ok {
		peer = Peer{}
	}
	peer.InProcess = true
	callCtx, cancel := context.WithCancel(WithPeer(ctx, peer))
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	setCallContext(argp.Interface(), callCtx)

	out, rerr := s.invoke(svc, m, method, argp)
	if rerr != nil {
		return rerr
	}
	if buf, err = Encode(out); err != nil {
		return &RemoteError{Text: fmt.Sprintf("rpcx: server could not send the response: %v", err)}
	}
	return Decode(buf, reply)
}

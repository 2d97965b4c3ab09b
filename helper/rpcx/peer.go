package rpcx

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
)

// Peer describes who is at the other end of a call, as far as the
// transport can tell. Endpoints use it to decide what a caller may do (only
// a server certificate may call server-to-server endpoints) and whom to
// count a call against (blocking queries per client).
type Peer struct {
	// Addr is the remote address of the connection the call arrived on.
	// For an in-process call it is the address of the original caller
	// (the HTTP client whose request became this call), or nil for the
	// process's own work (workers, leader loops).
	Addr net.Addr

	// TLS is the state of a verified TLS connection, nil when the call
	// came over plaintext or in process. When it is set, the peer
	// presented a certificate that chains to the configured CA.
	TLS *tls.ConnectionState

	// InProcess is set for calls made by this process through
	// Server.Call rather than over a connection.
	InProcess bool
}

// IP is the peer's IP address, the invalid Addr when unknown (an internal
// in-process call).
func (p Peer) IP() netip.Addr {
	switch a := p.Addr.(type) {
	case *net.TCPAddr:
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip.Unmap()
	case nil:
		return netip.Addr{}
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}
		}
		return ap.Addr().Unmap()
	}
}

// CertNames lists the DNS names of the verified certificate the peer
// presented, nil without one.
func (p Peer) CertNames() []string {
	if p.TLS == nil || len(p.TLS.PeerCertificates) == 0 {
		return nil
	}
	return p.TLS.PeerCertificates[0].DNSNames
}

type peerKey struct{}

// WithPeer returns a context that carries p. The server sets it on every
// call; an embedder making in-process calls on behalf of a remote user (the
// HTTP API) sets it to name that user's address.
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

// PeerFromContext returns the peer a call's context carries.
func PeerFromContext(ctx context.Context) (Peer, bool) {
	if ctx == nil {
		return Peer{}, false
	}
	p, ok := ctx.Value(peerKey{}).(Peer)
	return p, ok
}

// CallContextSetter is implemented by request types that want to know the
// context of the call they arrived in. The dispatcher calls SetCallContext
// on the decoded arguments before running the method. The context carries
// the Peer, and it ends when the caller is gone (its stream or connection
// closed, its in-process context cancelled) or the server shuts down, so a
// long wait such as a blocking query can stop early.
//
// The context is not part of the message: it is never encoded, so it does
// not travel when a server forwards the request to another.
type CallContextSetter interface {
	SetCallContext(ctx context.Context)
}

// setCallContext hands ctx to args if they want it.
func setCallContext(args any, ctx context.Context) {
	if s, ok := args.(CallContextSetter); ok {
		s.SetCallContext(ctx)
	}
}

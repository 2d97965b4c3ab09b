package rpcx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/yamux"
)

// Notices: a server tells a client something on the client's own session.
//
// A client that waits for a rare change (its node's allocs) could hold a
// blocking query open, but then the server holds a stream, its codec and
// two goroutines per waiting client for as long as nothing happens. A
// notice turns that around: the client registers with a quick call, the
// server keeps only the session the call came in on (see
// SessionFromContext), and when the change comes it opens a stream of its
// own on that session, writes one small message and closes the stream.
// Nothing is held on the server between the registration and the notice.
//
// On the wire a notice stream carries the type byte RPCNotice, a two-byte
// big-endian length and that many bytes of payload, then the server closes
// it. The payload is the embedder's (Drover's is a msgpack-encoded
// structs.AllocNotice); the transport only bounds its size.

// MaxNoticeSize bounds a notice's payload. A notice says what changed, not
// the change: the client fetches that with an ordinary call.
const MaxNoticeSize = 1024

// DefaultNoticeTimeout bounds pushing one notice, and reading one.
const DefaultNoticeTimeout = 10 * time.Second

// ErrNoSession is SessionFromContext's caller's error for a call that did
// not arrive on a multiplexed session (an in-process call, a plain
// connection): nothing can be pushed back to its caller.
var ErrNoSession = errors.New("the call did not arrive on a multiplexed session, which notices need")

type sessionKey struct{}

// withSession returns a context that carries the session a call arrived
// on.
func withSession(ctx context.Context, sess *yamux.Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, sess)
}

// SessionFromContext returns the multiplexed session a call arrived on, to
// push notices to its caller later (PushNotice). Calls in process or over
// a plain connection have none.
func SessionFromContext(ctx context.Context) (*yamux.Session, bool) {
	if ctx == nil {
		return nil, false
	}
	sess, ok := ctx.Value(sessionKey{}).(*yamux.Session)
	return sess, ok && sess != nil
}

// PushNotice sends payload to the peer of sess as one notice: it opens a
// stream, writes the notice and closes the stream. It takes at most
// timeout: a peer that does not take the notice in that time (a frozen
// process, a dead link) is taken for gone and its session is closed, as
// yamux's keepalive would close it a little later anyway. The client
// reconnects and registers again when it recovers. So one frozen peer
// holds whoever pushes to it for timeout at most.
func PushNotice(sess *yamux.Session, payload []byte, timeout time.Duration) error {
	if len(payload) > MaxNoticeSize {
		return fmt.Errorf("rpcx: notice of %d bytes is larger than the %d allowed", len(payload), MaxNoticeSize)
	}
	if timeout <= 0 {
		timeout = DefaultNoticeTimeout
	}
	// OpenStream waits, without a deadline of its own, while the peer
	// has not acknowledged yamux's backlog of streams: the watchdog
	// closes the session under it.
	watchdog := time.AfterFunc(timeout, func() { sess.Close() })
	defer watchdog.Stop()
	stream, err := sess.OpenStream()
	if err != nil {
		return fmt.Errorf("rpcx: opening a notice stream: %w", err)
	}
	defer stream.Close()
	if err := stream.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	msg := make([]byte, 3+len(payload))
	msg[0] = byte(RPCNotice)
	binary.BigEndian.PutUint16(msg[1:3], uint16(len(payload)))
	copy(msg[3:], payload)
	if _, err := stream.Write(msg); err != nil {
		return fmt.Errorf("rpcx: writing a notice: %w", err)
	}
	return nil
}

// readNotice reads one notice from a stream the server opened, within
// timeout. Anything but a well-formed notice of at most MaxNoticeSize is
// an error.
func readNotice(stream *yamux.Stream, timeout time.Duration) ([]byte, error) {
	if err := stream.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	var head [3]byte
	if _, err := io.ReadFull(stream, head[:1]); err != nil {
		return nil, fmt.Errorf("reading the stream's type: %w", err)
	}
	if t := ConnType(head[0]); t != RPCNotice {
		return nil, fmt.Errorf("a server-opened stream of type %s; only %s is accepted", t, RPCNotice)
	}
	if _, err := io.ReadFull(stream, head[1:]); err != nil {
		return nil, fmt.Errorf("reading the notice's length: %w", err)
	}
	n := int(binary.BigEndian.Uint16(head[1:]))
	if n > MaxNoticeSize {
		return nil, fmt.Errorf("a notice of %d bytes; at most %d are accepted", n, MaxNoticeSize)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(stream, payload); err != nil {
		return nil, fmt.Errorf("reading the notice: %w", err)
	}
	return payload, nil
}

// acceptNotices serves the streams the server opens on a pool session,
// one notice each, until the session closes: see PoolConfig.OnNotice.
// Streams are taken one at a time, and a bad one is closed and logged, so
// what a server can make a client hold is one notice's read.
func (p *ConnPool) acceptNotices(addr string, sess *yamux.Session) {
	defer p.wg.Done()
	for {
		stream, err := sess.AcceptStream()
		if err != nil {
			return
		}
		payload, err := readNotice(stream, p.cfg.NoticeTimeout)
		stream.Close()
		if err != nil {
			p.logger.Warn("closed a stream the server opened: it was not a notice", "addr", addr, "error", err)
			continue
		}
		p.cfg.OnNotice(addr, payload)
	}
}

// SessionBinder is implemented by replies that want to know when the
// session their call went over closes: a client registered for notices on
// a session must register again once that session is gone, since the
// server can no longer reach it there. The ConnPool calls BindSession on
// a successful call's reply with the session's close channel.
type SessionBinder interface {
	BindSession(closed <-chan struct{})
}

// bindSession hands the close channel of the session a call went over to
// the reply, if it wants it, and reports whether it did.
func bindSession(reply any, s *poolSession) bool {
	b, ok := reply.(SessionBinder)
	if ok {
		b.BindSession(s.sess.CloseChan())
	}
	return ok
}

package rpcx

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"
)

// poolSession is one yamux session to one server, with the streams that
// finished calls left open for reuse.
type poolSession struct {
	key  poolKey
	sess *yamux.Session

	// Guarded by ConnPool.mu: calls in progress, and when the last one ended.
	active   int
	lastUsed time.Time
	// bound is set once a call's reply asked to know when the session
	// closes (SessionBinder: a notice registration). Guarded by
	// ConnPool.mu.
	bound bool

	mu   sync.Mutex
	idle []*clientStream

	// answered is set once a call on the session got an answer: a
	// session that dies before that was most likely refused by the
	// server (see refusedHint).
	answered atomic.Bool

	// probing is set while a ping checks the session after a call on it
	// timed out (see ConnPool.probe).
	probing atomic.Bool
}

// clientStream is one yamux stream with its codec. It carries one call at a
// time; the server serves it like a connection.
type clientStream struct {
	stream *yamux.Stream
	codec  *msgCodec
}

// getStream reuses an idle stream or opens a new one.
func (s *poolSession) getStream(maxMessageSize int) (*clientStream, error) {
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		cs := s.idle[n-1]
		s.idle[n-1] = nil
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return cs, nil
	}
	s.mu.Unlock()
	stream, err := s.sess.OpenStream()
	if err != nil {
		return nil, err
	}
	return &clientStream{stream: stream, codec: newMsgCodec(stream, maxMessageSize)}, nil
}

// putStream keeps cs for reuse if it is still in step and there is room;
// otherwise it closes it.
func (s *poolSession) putStream(cs *clientStream, maxIdle int) {
	if !cs.codec.broken.Load() && maxIdle > 0 && !s.sess.IsClosed() {
		s.mu.Lock()
		if len(s.idle) < maxIdle {
			s.idle = append(s.idle, cs)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
	cs.codec.Close()
}

// longAgo is a deadline in the past: setting it fails blocked reads and
// writes at once.
var longAgo = time.Unix(1, 0)

// call runs one request and response on the stream. If ctx ends first it
// fails the stream's reads and writes with a past deadline, which leaves
// the stream unusable, so it is marked broken and will not be reused.
func (cs *clientStream) call(ctx context.Context, method string, args, reply any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil {
		return cs.codec.call(method, args, reply)
	}
	stop := context.AfterFunc(ctx, func() {
		cs.stream.SetDeadline(longAgo)
	})
	err := cs.codec.call(method, args, reply)
	if !stop() {
		cs.codec.broken.Store(true)
		if err != nil {
			return ctx.Err()
		}
	}
	return err
}

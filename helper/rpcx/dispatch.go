package rpcx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"reflect"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/yamux"
)

// The dispatcher serves calls on one connection or stream in place of
// net/rpc's (*rpc.Server).ServeCodec. It speaks the same protocol, message
// for message, so net/rpc clients and the ConnPool see no difference. It
// exists for one reason: net/rpc runs each method without recovering a
// panic, so one endpoint that dereferences nil on odd input would take down
// the whole server process, its raft leadership and its HTTP API with it.
// Here a panicking method is logged with its stack and its caller gets an
// error; every other call, on the same connection or elsewhere, goes on.
//
// Otherwise it behaves as net/rpc does: requests are read one after another
// on the connection's goroutine, each call runs in a goroutine of its own so
// a slow one does not hold up the next, and responses are written whole
// under the codec's write lock, in whatever order the calls finish.

// emptyBody is the body sent with an error response. net/rpc sends an empty
// struct too, and its client discards whatever comes.
var emptyBody = struct{}{}

// serveCodec serves calls on rwc until it fails or closes, then closes it.
// It returns only after every call it started has replied.
//
// Every call gets a context derived from ctx, which carries peer (see
// WithPeer; a session makes it once for all its streams), that ends when
// the read loop ends: the peer closed its stream or connection, or
// sent something that broke it. A caller that gives up on a call closes its
// stream (see clientStream.call), so a blocking query it left behind stops
// waiting instead of holding a goroutine for its whole wait.
//
// calls bounds how many calls may be in flight at once; it may be shared by
// every stream of a session. When it is full the read loop stops reading,
// so a peer that sends requests faster than it reads answers is held back
// by flow control instead of making the server hold ever more goroutines
// and replies.
func (s *Server) serveCodec(ctx context.Context, rwc io.ReadWriteCloser, peer Peer, calls chan struct{}) {
	c := newMsgCodec(rwc, s.cfg.maxMessageSize)
	c.writeTimeout = s.cfg.writeTimeout
	c.frame.src.budget = s.reads
	c.frame.src.readTimeout = s.cfg.messageReadTimeout
	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() {
		// The peer is gone or the server is stopping: tell the calls still
		// running, then wait for them to answer (or fail to).
		cancel()
		running.Wait()
		c.Close()
		c.frame.src.release()
	}()

	w := &slotWaiter{ctx: ctx, calls: calls, frame: c.frame}
	var req rpc.Request
	for {
		// A stream goes on yielding what it buffered after its session is
		// gone, and a peer may have sent thousands of requests before it
		// hung up: once the peer is gone (ctx), or an answer could not be
		// written to it (broken), nothing more is read or started.
		if !w.readable() || ctx.Err() != nil || c.broken.Load() {
			return
		}
		req = rpc.Request{}
		if err := c.ReadRequestHeader(&req); err != nil {
			if !isClosedStream(err) {
				s.logger.Debug("closing RPC connection: cannot read the next request", "remote", peer.Addr, "error", err)
			}
			return
		}
		svc, m, err := s.services.lookup(req.ServiceMethod)
		if err != nil {
			// Skip the body so the stream stays in step for the next call.
			_ = c.ReadRequestBody(nil)
			s.respond(c, req.ServiceMethod, req.Seq, nil, NewRemoteError(err))
			if c.broken.Load() {
				return
			}
			continue
		}
		argp := m.newArgs()
		if err := c.ReadRequestBody(argp.Interface()); err != nil {
			// A body that was framed but does not fit the method's argument
			// type leaves the stream in step; anything else (too large,
			// malformed, cut off) does not, and the caller is told why
			// before the connection closes.
			s.respond(c, req.ServiceMethod, req.Seq, nil, NewRemoteError(err))
			if c.broken.Load() {
				return
			}
			continue
		}
		if !w.slot() {
			return
		}
		if ctx.Err() != nil {
			<-calls
			return
		}
		setCallContext(argp.Interface(), ctx)
		serviceMethod, seq := req.ServiceMethod, req.Seq
		// Not running.Go: its wrapper would cost a second allocation per call.
		running.Add(1)
		go func() {
			defer running.Done()
			defer func() { <-calls }()
			reply, rerr := s.invoke(svc, m, serviceMethod, argp)
			s.respond(c, serviceMethod, seq, reply, rerr)
			if c.broken.Load() {
				// The answer could not be written (the peer stopped
				// reading until the write timed out): the stream's
				// position is lost, so end it, which also ends the
				// read loop.
				c.Close()
			}
		}()
	}
}

// slotWaiter takes a call slot for the read loop, watching meanwhile for
// the peer going away.
//
// The loop must stop reading while every slot is taken, or a peer could
// make it start calls without limit. But the calls in flight end early only
// when the call context does, and the loop cancels that when it sees the
// peer close: which it cannot see while it is not reading. So while it
// waits it peeks, without consuming, at what comes next: end of stream
// means the peer is gone and the loop ends (cancelling its calls); a byte
// means the peer is alive and sent more, and the loop just waits for a
// slot.
type slotWaiter struct {
	ctx   context.Context
	calls chan struct{}
	frame *frameScanner
	// peeked is set while a peek runs; the loop must not read until it
	// has answered.
	peeked chan error
}

// slot takes a call slot, or reports false if the peer went away or the
// server is stopping first.
func (w *slotWaiter) slot() bool {
	select {
	case w.calls <- struct{}{}:
		return true
	default:
	}
	if w.peeked == nil {
		ch := make(chan error, 1)
		w.peeked = ch
		go func() { ch <- w.frame.peek() }()
	}
	select {
	case w.calls <- struct{}{}:
		return true
	case err := <-w.peeked:
		w.peeked = nil
		if err != nil {
			return false
		}
	case <-w.ctx.Done():
		return false
	}
	select {
	case w.calls <- struct{}{}:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// readable waits for a peek still in progress, and reports false if it
// found the stream ended.
func (w *slotWaiter) readable() bool {
	if w.peeked == nil {
		return true
	}
	err := <-w.peeked
	w.peeked = nil
	return err == nil
}

// invoke calls the method and returns its reply, or the error to send
// instead, as a RemoteError: the text and code the caller will get. Its
// text is rendered here, so a panic in the method, or in its error's Error
// method, is recovered here: it is logged with the stack and becomes the
// call's error.
func (s *Server) invoke(svc *service, m *method, serviceMethod string, argp reflect.Value) (reply any, rerr *RemoteError) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("RPC handler panicked; the call fails and the server goes on",
				"method", serviceMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			reply, rerr = nil, &RemoteError{Text: fmt.Sprintf("rpc: internal error in %s: %v", serviceMethod, p)}
		}
		if s.cfg.observe != nil {
			s.cfg.observe(serviceMethod, rerr != nil)
		}
	}()
	replyp := m.newReply()
	out := m.fn.Call([]reflect.Value{svc.rcvr, m.arg(argp), replyp})
	if err, _ := out[0].Interface().(error); err != nil {
		return nil, NewRemoteError(err)
	}
	return replyp.Interface(), nil
}

// respond writes the answer to one call. An error replaces the reply, as
// in net/rpc, and its code goes next to its text (see ErrorCoder). A write
// that fails means the connection is going away; the read loop finds that
// out for itself.
func (s *Server) respond(c *msgCodec, serviceMethod string, seq uint64, reply any, rerr *RemoteError) {
	resp := responseHeaders.Get().(*responseHeader)
	*resp = responseHeader{ServiceMethod: serviceMethod, Seq: seq}
	if rerr != nil {
		resp.Error, resp.ErrorCode = rerr.Text, encodeCodes(rerr.Codes)
		reply = emptyBody
	}
	_ = c.writeAnswer(resp, reply, s.writes)
	*resp = responseHeader{}
	responseHeaders.Put(resp)
}

// responseHeaders recycles response headers, which would otherwise cost an
// allocation per call: the encoder takes them as an interface. writeAnswer
// has encoded and sent the header by the time it returns.
var responseHeaders = sync.Pool{New: func() any { return new(responseHeader) }}

// isClosedStream reports whether err is the ordinary end of a connection or
// stream, not worth a log line.
func isClosedStream(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, yamux.ErrStreamClosed) ||
		errors.Is(err, yamux.ErrConnectionReset) ||
		errors.Is(err, yamux.ErrSessionShutdown)
}

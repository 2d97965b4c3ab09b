package rpcx

import (
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
func (s *Server) serveCodec(rwc io.ReadWriteCloser) {
	c := newMsgCodec(rwc, s.cfg.maxMessageSize)
	var calls sync.WaitGroup
	defer func() {
		calls.Wait()
		c.Close()
	}()

	var req rpc.Request
	for {
		req = rpc.Request{}
		if err := c.ReadRequestHeader(&req); err != nil {
			if !isClosedStream(err) {
				s.logger.Debug("closing RPC connection: cannot read the next request", "error", err)
			}
			return
		}
		svc, m, err := s.services.lookup(req.ServiceMethod)
		if err != nil {
			// Skip the body so the stream stays in step for the next call.
			_ = c.ReadRequestBody(nil)
			respond(c, req.ServiceMethod, req.Seq, nil, err.Error())
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
			respond(c, req.ServiceMethod, req.Seq, nil, err.Error())
			if c.broken.Load() {
				return
			}
			continue
		}
		serviceMethod, seq := req.ServiceMethod, req.Seq
		// Not calls.Go: its wrapper would cost a second allocation per call.
		calls.Add(1)
		go func() {
			defer calls.Done()
			reply, errmsg := s.invoke(svc, m, serviceMethod, argp)
			respond(c, serviceMethod, seq, reply, errmsg)
		}()
	}
}

// invoke calls the method and returns its reply, or the error message to
// send instead. A panic in the method, or in its error's Error method, is
// recovered here: it is logged with the stack and becomes the call's error.
func (s *Server) invoke(svc *service, m *method, serviceMethod string, argp reflect.Value) (reply any, errmsg string) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("RPC handler panicked; the call fails and the server goes on",
				"method", serviceMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			reply, errmsg = nil, fmt.Sprintf("rpc: internal error in %s: %v", serviceMethod, p)
		}
	}()
	replyp := m.newReply()
	out := m.fn.Call([]reflect.Value{svc.rcvr, m.arg(argp), replyp})
	if err, _ := out[0].Interface().(error); err != nil {
		return nil, err.Error()
	}
	return replyp.Interface(), ""
}

// respond writes the answer to one call. An errmsg replaces the reply, as
// in net/rpc. A write that fails means the connection is going away; the
// read loop finds that out for itself.
func respond(c *msgCodec, serviceMethod string, seq uint64, reply any, errmsg string) {
	resp := responseHeaders.Get().(*rpc.Response)
	*resp = rpc.Response{ServiceMethod: serviceMethod, Seq: seq, Error: errmsg}
	if errmsg != "" {
		reply = emptyBody
	}
	_ = c.WriteResponse(resp, reply)
	*resp = rpc.Response{}
	responseHeaders.Put(resp)
}

// responseHeaders recycles response headers, which would otherwise cost an
// allocation per call: the encoder takes them as an interface. WriteResponse
// has encoded and sent the header by the time it returns.
var responseHeaders = sync.Pool{New: func() any { return new(rpc.Response) }}

// isClosedStream reports whether err is the ordinary end of a connection or
// stream, not worth a log line.
func isClosedStream(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, yamux.ErrStreamClosed) ||
		errors.Is(err, yamux.ErrConnectionReset) ||
		errors.Is(err, yamux.ErrSessionShutdown)
}

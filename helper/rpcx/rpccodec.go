package rpcx

import (
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// msgCodec is the net/rpc codec for both ends of a connection or stream.
// Each message is a msgpack header value (rpc.Request or rpc.Response)
// followed by a msgpack body value: the same bytes as
// github.com/hashicorp/net-rpc-msgpackrpc produces, so either side can talk
// to that package's codec. It differs from that codec in how it reads and
// writes, not in what:
//
//   - Reads go through a frameScanner, which bounds a message's size and
//     never lets a length prefix drive an allocation (see frameScanner),
//     and a value is decoded only if what it decodes into stays within a
//     multiple of its size (see checkDecodeCost).
//   - Writes encode the whole message into memory first. A message that is
//     too large or fails to encode is then never half-written, so the
//     stream stays usable; on the server the caller gets an error response
//     instead of waiting for a reply that never comes.
//
// Reads are not locked: net/rpc reads from one goroutine. Writes are, because
// net/rpc's server writes responses from one goroutine per call.
type msgCodec struct {
	rwc   io.ReadWriteCloser
	frame *frameScanner
	limit int

	// writeTimeout, when positive, bounds each write: a server's answer to
	// a peer that stopped reading fails instead of holding its goroutine
	// and its reply forever.
	writeTimeout time.Duration

	// wbuf and enc render requests (the client side); enc is made on
	// first use, so a server's streams, which answer through
	// encodeMessage, never hold one.
	wmu  sync.Mutex
	wbuf []byte
	enc  *codec.Encoder

	// broken is set once a read or write failed in a way that leaves the
	// stream's position unknown. A pooled client stream is then discarded.
	broken atomic.Bool
	// unwritable is set once a write failed or the codec was closed: no
	// answer can reach the peer any more. (A read that failed still lets
	// the server tell the peer why before it closes.)
	unwritable atomic.Bool
	closeOnce  sync.Once
	closeErr   error
}

func newMsgCodec(rwc io.ReadWriteCloser, maxMessageSize int) *msgCodec {
	if maxMessageSize <= 0 {
		maxMessageSize = DefaultMaxMessageSize
	}
	return &msgCodec{
		rwc:   rwc,
		frame: newFrameScanner(rwc, maxMessageSize),
		limit: maxMessageSize,
	}
}

// NewServerCodec returns a net/rpc server codec over rwc, for callers that
// serve a connection themselves. maxMessageSize <= 0 means
// DefaultMaxMessageSize.
func NewServerCodec(rwc io.ReadWriteCloser, maxMessageSize int) rpc.ServerCodec {
	return newMsgCodec(rwc, maxMessageSize)
}

// NewClientCodec returns a net/rpc client codec over rwc, for example to use
// rpc.NewClientWithCodec on a connection from Dial(addr, RPCStandard).
// maxMessageSize <= 0 means DefaultMaxMessageSize.
func NewClientCodec(rwc io.ReadWriteCloser, maxMessageSize int) rpc.ClientCodec {
	return newMsgCodec(rwc, maxMessageSize)
}

// ReadRequestHeader implements rpc.ServerCodec.
func (c *msgCodec) ReadRequestHeader(r *rpc.Request) error {
	c.frame.startMessage()
	return c.read(r, true)
}

// ReadRequestBody implements rpc.ServerCodec.
func (c *msgCodec) ReadRequestBody(body any) error {
	return c.read(body, false)
}

// WriteResponse implements rpc.ServerCodec. If the response cannot be
// encoded within the size limit, the caller is sent an error in its place.
// The server's dispatcher answers through writeAnswer instead, which also
// bounds the bytes waiting to be written; this is for net/rpc's own use.
func (c *msgCodec) WriteResponse(r *rpc.Response, body any) error {
	return c.writeAnswer(&responseHeader{ServiceMethod: r.ServiceMethod, Seq: r.Seq, Error: r.Error}, body, nil)
}

// responseHeader is the header of a response message: net/rpc's
// rpc.Response, field for field, plus the ErrorCodes of the error (see
// ErrorCoder and encodeCodes; noCode for an error without one). It is encoded as a map, so
// a peer that decodes the header into an rpc.Response (net/rpc,
// net-rpc-msgpackrpc, a Drover of an earlier release) skips the code and
// reads the rest; and the field is left out of answers that are not
// errors, which are therefore the same bytes as before.
type responseHeader struct {
	ServiceMethod string
	Seq           uint64
	Error         string
	ErrorCode     string `codec:",omitempty"`
}

// writeAnswer encodes a response outside the write lock, so that calls
// finishing together on one session render their answers in parallel and
// only the write is serialised, then writes it.
//
// An answer to a stream that cannot be written any more (an earlier write
// failed or timed out, or it was closed) is not even encoded: every call of
// a session may be waiting to answer such a stream, and each would render
// its reply only to fail the write.
//
// budget, when set, is the server-wide bound on the bytes of encoded
// answers waiting for or in the middle of a write. A peer that reads
// slowly (but not so slowly that a write times out) would otherwise make
// the server hold one encoded answer per call in flight, on every session
// it opens. Past the budget the call is answered with a short "server busy"
// error instead, at once: waiting for room would hold the encoded answer
// all the same.
func (c *msgCodec) writeAnswer(r *responseHeader, body any, budget *writeBudget) error {
	if c.unwritable.Load() {
		return errBrokenStream
	}
	msg, err := encodeMessage(r, body, c.limit)
	if err != nil {
		failed := responseHeader{
			ServiceMethod: r.ServiceMethod,
			Seq:           r.Seq,
			Error:         fmt.Sprintf("rpcx: server could not send the response: %v", err),
			ErrorCode:     noCode,
		}
		if msg, err = encodeMessage(&failed, nil, c.limit); err != nil {
			return err
		}
	}
	defer putMessage(msg)
	if budget != nil {
		if !budget.tryAcquire(int64(len(*msg))) {
			busy := responseHeader{ServiceMethod: r.ServiceMethod, Seq: r.Seq, Error: budget.busyError(len(*msg)), ErrorCode: noCode}
			putMessage(msg)
			if msg, err = encodeMessage(&busy, nil, c.limit); err != nil {
				return err
			}
		} else {
			defer budget.release(int64(len(*msg)))
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.unwritable.Load() {
		return errBrokenStream
	}
	return c.write(*msg)
}

// WriteRequest implements rpc.ClientCodec. A request that cannot be encoded
// within the size limit is refused before anything is written.
func (c *msgCodec) WriteRequest(r *rpc.Request, body any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	msg, err := c.encode(r, body)
	if err != nil {
		return err
	}
	return c.write(msg)
}

// ReadResponseHeader implements rpc.ClientCodec. It drops the error code;
// the ConnPool reads it with call.
func (c *msgCodec) ReadResponseHeader(r *rpc.Response) error {
	c.frame.startMessage()
	return c.read(r, true)
}

// callSeq numbers the requests of call, as net/rpc's client numbers its.
var callSeq atomic.Uint64

// call sends one request and reads its answer, as net-rpc-msgpackrpc's
// CallWithCodec does, but reads the response header with its error code:
// an error the handler returned comes back as a RemoteError that errors.Is
// matches against the handler's sentinel.
func (c *msgCodec) call(method string, args, reply any) error {
	req := rpc.Request{ServiceMethod: method, Seq: callSeq.Add(1)}
	if err := c.WriteRequest(&req, args); err != nil {
		return err
	}
	var resp responseHeader
	c.frame.startMessage()
	if err := c.read(&resp, true); err != nil {
		return err
	}
	if resp.Error != "" {
		remote := &RemoteError{Text: resp.Error, Codes: decodeCodes(resp.ErrorCode), Legacy: resp.ErrorCode == ""}
		if err := c.ReadResponseBody(nil); err != nil {
			// The stream is out of step and will not be reused; the
			// handler's error is still the answer.
			remote.Text = fmt.Sprintf("%s (and then reading the rest of the answer failed: %v)", remote.Text, err)
		}
		return remote
	}
	return c.ReadResponseBody(reply)
}

// ReadResponseBody implements rpc.ClientCodec.
func (c *msgCodec) ReadResponseBody(body any) error {
	return c.read(body, false)
}

// Close closes the underlying connection or stream. It is safe to call more
// than once and concurrently with reads and writes.
func (c *msgCodec) Close() error {
	c.closeOnce.Do(func() {
		c.broken.Store(true)
		c.unwritable.Store(true)
		c.closeErr = c.rwc.Close()
	})
	return c.closeErr
}

// read decodes the next value into out; a nil out discards it (net/rpc does
// that for the body of a request it cannot serve).
func (c *msgCodec) read(out any, header bool) error {
	b, err := c.frame.next()
	if err != nil {
		c.broken.Store(true)
		if !header && err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		// net/rpc compares against io.EOF and io.ErrUnexpectedEOF with ==.
		return err
	}
	if out == nil {
		return nil
	}
	if err := checkDecodeCost(b, out); err != nil {
		// Refused before decoding; like a body of the wrong type, the value
		// was consumed whole.
		if header {
			c.broken.Store(true)
		}
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	if err := decodePooled(b, out); err != nil {
		// The value was consumed whole, so a body that does not fit its Go
		// type leaves the stream in step. A header that does not decode
		// means the peer does not speak this protocol.
		if header {
			c.broken.Store(true)
		}
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	return nil
}

// encode renders header and body into the codec's write buffer. The result
// is valid until the next call. The lock must be held.
func (c *msgCodec) encode(header, body any) ([]byte, error) {
	if cap(c.wbuf) > keepBufCap {
		c.wbuf = nil
	}
	c.wbuf = c.wbuf[:0]
	if c.enc == nil {
		c.enc = codec.NewEncoderBytes(&c.wbuf, MsgpackHandle)
	}
	c.enc.ResetBytes(&c.wbuf)
	if err := c.enc.Encode(header); err != nil {
		return nil, fmt.Errorf("rpcx: encode %T: %w", header, err)
	}
	if err := c.enc.Encode(body); err != nil {
		return nil, fmt.Errorf("rpcx: encode %T: %w", body, err)
	}
	if len(c.wbuf) > c.limit {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrMessageTooLarge, len(c.wbuf), c.limit)
	}
	return c.wbuf, nil
}

// encoders and messages recycle what encodeMessage needs per answer: an
// encoder (costly to make) and a buffer. Buffers that grew past keepBufCap
// for one large answer are not kept.
var (
	encoders = sync.Pool{New: func() any { return codec.NewEncoderBytes(nil, MsgpackHandle) }}
	messages = sync.Pool{New: func() any { return new([]byte) }}
)

// encodeMessage renders header and body into a buffer of its own, which
// the caller gives back with putMessage.
func encodeMessage(header, body any, limit int) (*[]byte, error) {
	buf := messages.Get().(*[]byte)
	*buf = (*buf)[:0]
	enc := encoders.Get().(*codec.Encoder)
	defer encoders.Put(enc)
	enc.ResetBytes(buf)
	err := enc.Encode(header)
	if err == nil {
		err = enc.Encode(body)
	}
	enc.ResetBytes(nil)
	switch {
	case err != nil:
		putMessage(buf)
		return nil, fmt.Errorf("rpcx: encode %T: %w", body, err)
	case len(*buf) > limit:
		n := len(*buf)
		putMessage(buf)
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrMessageTooLarge, n, limit)
	}
	return buf, nil
}

func putMessage(buf *[]byte) {
	if cap(*buf) > keepBufCap {
		return
	}
	messages.Put(buf)
}

// errBrokenStream is what writing to a stream that cannot be written returns.
var errBrokenStream = errors.New("rpcx: the connection or stream is broken; the answer was not sent")

// writeDeadliner is what net.Conn and yamux.Stream offer to bound a write.
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

func (c *msgCodec) write(msg []byte) error {
	if c.writeTimeout > 0 {
		if d, ok := c.rwc.(writeDeadliner); ok {
			_ = d.SetWriteDeadline(time.Now().Add(c.writeTimeout))
			defer d.SetWriteDeadline(time.Time{})
		}
	}
	if _, err := c.rwc.Write(msg); err != nil {
		c.broken.Store(true)
		c.unwritable.Store(true)
		return err
	}
	return nil
}

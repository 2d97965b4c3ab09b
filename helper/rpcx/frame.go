package rpcx

import (
	"fmt"
	"io"
)

// DefaultMaxMessageSize bounds one RPC message: a request or response header
// plus its body. Drover's largest legitimate messages (a job with many task
// groups, a page of allocations) are a few MiB.
const DefaultMaxMessageSize = 16 << 20

// keepBufCap: buffers that grew beyond this for one big message are dropped
// afterwards, so an idle connection does not pin its largest message.
const keepBufCap = 64 << 10

// readChunk is how much payload the scanner reads (and grows its buffer by)
// at a time, so a value that claims more bytes than ever arrive costs memory
// only for what did arrive.
const readChunk = 64 << 10

// frameScanner reads one complete msgpack value at a time off a stream into
// a buffer, without decoding it.
//
// Why not let the go-msgpack decoder read the stream directly? Because the
// decoder trusts length prefixes: for some types (an ext value, a time) it
// allocates the claimed length before reading, so six bytes claiming a 4 GiB
// payload would allocate 4 GiB. The scanner checks every length against the
// bytes the message may still use before reading anything, and only reads
// (and buffers) bytes that actually arrive. The decoder then works on a
// complete, bounded buffer. A second benefit: a value that is well framed but
// does not decode into the expected Go type is consumed whole, so the
// stream stays in step and the connection keeps working.
type frameScanner struct {
	src   streamSource
	walk  valueWalker
	limit int
	// err is sticky: after a framing error the stream position is unknown.
	err error
}

func newFrameScanner(r io.Reader, limit int) *frameScanner {
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	f := &frameScanner{src: streamSource{r: r}, limit: limit}
	f.walk.budget = limit
	return f
}

// startMessage resets the budget. A message is a header value followed by a
// body value; both count against one limit. Between messages a stream is
// usually idle, often for minutes (a blocking query's stream waits for its
// next call), so the read buffers go back to their pools until bytes
// arrive again (see streamSource.idle).
func (f *frameScanner) startMessage() {
	f.walk.budget = f.limit
	f.src.idle()
}

// next returns the bytes of the next msgpack value. They are valid until the
// next call. It returns io.EOF only if the stream ended cleanly before the
// value's first byte.
func (f *frameScanner) next() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.src.reset()
	f.src.release()
	err := f.walk.value(&f.src, f.limit)
	f.src.endValue()
	if err != nil {
		if err == io.EOF && len(f.src.buf) > 0 {
			err = io.ErrUnexpectedEOF
		}
		f.err = err
		return nil, err
	}
	return f.src.buf, nil
}

// peek waits until the next byte of the stream has arrived, without
// consuming it, and returns the error that ended the stream if it ends
// first.
func (f *frameScanner) peek() error {
	return f.src.peek()
}

// checkValue verifies that b starts with one well-formed msgpack value whose
// every length prefix is backed by bytes that are really there, so decoding
// it cannot allocate more than b's size suggests.
func checkValue(b []byte) error {
	_, err := valueLen(b)
	return err
}

// valueLen is checkValue that also returns how many bytes the value takes.
func valueLen(b []byte) (int, error) {
	w := valueWalker{budget: len(b), inMemory: true}
	src := &sliceSource{b: b}
	if err := w.value(src, len(b)); err != nil {
		return 0, err
	}
	return src.pos, nil
}

// valueSource is where a valueWalker gets bytes from: a network stream, or a
// byte slice already in memory.
type valueSource interface {
	readByte() (byte, error)
	// skip moves past n bytes of payload.
	skip(n int) error
}

// valueWalker walks the structure of one msgpack value, checking every
// length prefix against the budget before consuming what it announces.
type valueWalker struct {
	// budget is how many bytes the current message may still use.
	budget int
	// pending[i] is how many values the i-th open container still holds.
	pending []uint64
	// inMemory: the budget is simply the bytes left in a slice, so running
	// out of it means the value is truncated, not too large.
	inMemory bool
}

// value walks one msgpack value from src. limit is only for error messages.
func (w *valueWalker) value(src valueSource, limit int) error {
	pending := append(w.pending[:0], 1)
	defer func() { w.pending = pending[:0] }()
	first := true
	for len(pending) > 0 {
		top := len(pending) - 1
		if pending[top] == 0 {
			pending = pending[:top]
			continue
		}
		pending[top]--

		b, err := w.readByte(src, limit)
		if err != nil {
			if err == io.EOF && !first {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		first = false
		payload, elems, err := w.describe(src, limit, b)
		if err != nil {
			return err
		}
		if elems > 0 {
			if len(pending) > maxNesting {
				return fmt.Errorf("%w: nested deeper than %d", ErrMalformedMessage, maxNesting)
			}
			// Every element takes at least one byte.
			if elems > uint64(w.budget) {
				return w.tooLarge(elems, limit)
			}
			pending = append(pending, elems)
		}
		if payload > 0 {
			if payload > uint64(w.budget) {
				return w.tooLarge(payload, limit)
			}
			if err := src.skip(int(payload)); err != nil {
				return unexpectedEOF(err)
			}
			w.budget -= int(payload)
		}
	}
	return nil
}

// describe reads whatever length field follows the type byte b and returns
// how many payload bytes follow and how many nested values follow.
func (w *valueWalker) describe(src valueSource, limit int, b byte) (payload, elems uint64, err error) {
	switch {
	case b <= 0x7f, b >= 0xe0: // positive and negative fixint
		return 0, 0, nil
	case b <= 0x8f: // fixmap
		return 0, 2 * uint64(b&0x0f), nil
	case b <= 0x9f: // fixarray
		return 0, uint64(b & 0x0f), nil
	case b <= 0xbf: // fixstr
		return uint64(b & 0x1f), 0, nil
	}
	var n uint64
	switch b {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return 0, 0, nil
	case 0xc4, 0xd9: // bin8, str8
		n, err = w.readLen(src, limit, 1)
		return n, 0, err
	case 0xc5, 0xda: // bin16, str16
		n, err = w.readLen(src, limit, 2)
		return n, 0, err
	case 0xc6, 0xdb: // bin32, str32
		n, err = w.readLen(src, limit, 4)
		return n, 0, err
	case 0xc7: // ext8: length, then a type byte, then the data
		n, err = w.readLen(src, limit, 1)
		return n + 1, 0, err
	case 0xc8: // ext16
		n, err = w.readLen(src, limit, 2)
		return n + 1, 0, err
	case 0xc9: // ext32
		n, err = w.readLen(src, limit, 4)
		return n + 1, 0, err
	case 0xcc, 0xd0: // uint8, int8
		return 1, 0, nil
	case 0xcd, 0xd1: // uint16, int16
		return 2, 0, nil
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return 4, 0, nil
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return 8, 0, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 plus a type byte
		return 1 + 1<<(b-0xd4), 0, nil
	case 0xdc: // array16
		n, err = w.readLen(src, limit, 2)
		return 0, n, err
	case 0xdd: // array32
		n, err = w.readLen(src, limit, 4)
		return 0, n, err
	case 0xde: // map16
		n, err = w.readLen(src, limit, 2)
		return 0, 2 * n, err
	case 0xdf: // map32
		n, err = w.readLen(src, limit, 4)
		return 0, 2 * n, err
	}
	// Only 0xc1 is left: reserved, never valid.
	return 0, 0, fmt.Errorf("%w: reserved type byte 0x%02x", ErrMalformedMessage, b)
}

func (w *valueWalker) readByte(src valueSource, limit int) (byte, error) {
	if w.budget < 1 {
		return 0, w.tooLarge(1, limit)
	}
	b, err := src.readByte()
	if err != nil {
		return 0, err
	}
	w.budget--
	return b, nil
}

// readLen reads a big-endian length field of size bytes.
func (w *valueWalker) readLen(src valueSource, limit, size int) (uint64, error) {
	var n uint64
	for range size {
		b, err := w.readByte(src, limit)
		if err != nil {
			return 0, unexpectedEOF(err)
		}
		n = n<<8 | uint64(b)
	}
	return n, nil
}

func (w *valueWalker) tooLarge(need uint64, limit int) error {
	if w.inMemory {
		return fmt.Errorf("%w: a value needs %d more bytes but only %d are left: %w",
			ErrMalformedMessage, need, w.budget, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%w: a value needs %d more bytes but only %d of the %d-byte limit remain",
		ErrMessageTooLarge, need, w.budget, limit)
}

// sliceSource reads from a byte slice already in memory.
type sliceSource struct {
	b   []byte
	pos int
}

func (s *sliceSource) readByte() (byte, error) {
	if s.pos >= len(s.b) {
		return 0, io.EOF
	}
	b := s.b[s.pos]
	s.pos++
	return b, nil
}

func (s *sliceSource) skip(n int) error {
	if n > len(s.b)-s.pos {
		s.pos = len(s.b)
		return io.ErrUnexpectedEOF
	}
	s.pos += n
	return nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

package rpcx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// streamSource reads from a stream and keeps every byte of the current
// value in buf.
//
// A server holds one stream per call in flight, and a fleet's clients each
// keep a blocking query open: ten thousand nodes are ten thousand streams
// that sit idle between a request and the next. So a stream holds no read
// buffer while it waits: between messages (idle) the bufio.Reader and the
// message buffer go back to pools and the stream itself is asked to drop
// its receive buffer; the first byte of the next message is read on its
// own, holding nothing, and only then are buffers taken again. A stream
// that has bytes waiting keeps its reader, so pipelined requests cost no
// extra reads.
type streamSource struct {
	r io.Reader
	// br buffers reads from r; nil while the stream is idle.
	br *bufio.Reader
	// one holds a byte read while no reader was held, by peek or by the
	// first read of a message; has says whether it is still unconsumed.
	one [1]byte
	has bool
	// buf holds the bytes of the current value; bufp is the pooled slice
	// it came from (nil while idle).
	buf  []byte
	bufp *[]byte
	// budget, when set, is shared by every connection of a server: bytes a
	// message holds beyond keepBufCap are taken from it while the message
	// is read and given back when the next one starts (see readBudget).
	// held is what this source has taken for its current buffer.
	budget *readBudget
	held   int64
	// readTimeout, when positive, bounds how long a value may take to
	// arrive once it holds part of the budget: a peer that sends most of
	// a large message and then stops would otherwise keep those bytes
	// from every other connection for as long as it keeps its own open.
	// The deadline is set on r when the value first takes from the budget
	// and cleared when the value ends (endValue), so a stream waiting
	// idle between messages has none. deadline says one is set, for
	// deadlineAt.
	readTimeout time.Duration
	deadline    bool
	deadlineAt  time.Time
}

// readDeadliner is a stream whose reads can be given a deadline: a
// net.Conn, a yamux stream.
type readDeadliner interface {
	SetReadDeadline(time.Time) error
}

// readBufSize is the bufio.Reader size a reading stream holds.
const readBufSize = 4096

var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}
	msgBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}
)

// shrinker is what a yamux stream offers to drop an empty receive buffer.
type shrinker interface{ Shrink() }

// idle gives the buffers back if nothing read is still waiting in them.
// Only the reading goroutine calls it, and only between values: what next
// returned last is no longer in use.
func (s *streamSource) idle() {
	if s.br != nil {
		if s.br.Buffered() > 0 {
			return
		}
		s.br.Reset(nil)
		readers.Put(s.br)
		s.br = nil
	}
	if s.bufp != nil {
		if cap(s.buf) <= keepBufCap {
			*s.bufp = s.buf[:0]
			msgBufs.Put(s.bufp)
		}
		s.buf, s.bufp = nil, nil
	}
	if sh, ok := s.r.(shrinker); ok {
		sh.Shrink()
	}
}

// reset empties buf for the next value, dropping a buffer that grew past
// keepBufCap for one large value.
func (s *streamSource) reset() {
	if cap(s.buf) > keepBufCap {
		s.buf, s.bufp = nil, nil
	}
	s.buf = s.buf[:0]
}

// reader returns the buffered reader, taking one from the pool if the
// source holds none.
func (s *streamSource) reader() *bufio.Reader {
	if s.br == nil {
		s.br = readers.Get().(*bufio.Reader)
		s.br.Reset(s.r)
	}
	return s.br
}

// appendByte adds b to buf, taking a pooled buffer if buf has none. A
// value made of many one-byte parts (an array of nils) grows buf a byte
// at a time, so past keepBufCap the budget is taken a chunk ahead, as
// skip takes it for a payload.
func (s *streamSource) appendByte(b byte) error {
	if s.buf == nil {
		s.bufp = msgBufs.Get().(*[]byte)
		s.buf = (*s.bufp)[:0]
	}
	if n := len(s.buf) + 1; n > keepBufCap && int64(n-keepBufCap) > s.held {
		if err := s.reserve(len(s.buf) + readChunk); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, b)
	return nil
}

// waitByte reads one byte into one while holding no reader.
func (s *streamSource) waitByte() error {
	for {
		n, err := s.r.Read(s.one[:])
		if n == 1 {
			s.has = true
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// peek waits until the next byte has arrived, without consuming it, and
// returns the error that ended the stream if it ends first.
func (s *streamSource) peek() error {
	if s.has || (s.br != nil && s.br.Buffered() > 0) {
		return nil
	}
	if s.br != nil {
		_, err := s.br.Peek(1)
		return err
	}
	return s.waitByte()
}

func (s *streamSource) readByte() (byte, error) {
	if !s.has {
		if s.br != nil {
			b, err := s.br.ReadByte()
			if err != nil {
				return 0, s.tooSlow(err)
			}
			if err := s.appendByte(b); err != nil {
				return 0, err
			}
			return b, nil
		}
		// Idle: wait for the first byte holding no buffer.
		if err := s.waitByte(); err != nil {
			return 0, err
		}
	}
	// The rest of the message is read through a pooled reader.
	s.has = false
	s.reader()
	if err := s.appendByte(s.one[0]); err != nil {
		return 0, err
	}
	return s.one[0], nil
}

// skip reads n payload bytes into buf a chunk at a time, so a value that
// claims more than ever arrives costs memory only for what did arrive.
func (s *streamSource) skip(n int) error {
	if n > 0 && s.has {
		s.has = false
		if err := s.appendByte(s.one[0]); err != nil {
			return err
		}
		n--
	}
	for n > 0 {
		chunk := min(n, readChunk)
		start := len(s.buf)
		if err := s.reserve(start + chunk); err != nil {
			return err
		}
		s.buf = slices.Grow(s.buf, chunk)[:start+chunk]
		if _, err := io.ReadFull(s.reader(), s.buf[start:]); err != nil {
			s.buf = s.buf[:start]
			return s.tooSlow(err)
		}
		n -= chunk
	}
	return nil
}

// reserve takes from the budget what growing buf to n bytes needs beyond
// keepBufCap and what is already held.
func (s *streamSource) reserve(n int) error {
	if s.budget == nil || n <= keepBufCap {
		return nil
	}
	need := int64(n-keepBufCap) - s.held
	if need <= 0 {
		return nil
	}
	start := time.Now()
	if err := s.budget.acquire(need, s.held); err != nil {
		return err
	}
	switch waited := time.Since(start); {
	case s.held == 0 && s.readTimeout > 0:
		at := time.Now().Add(s.readTimeout)
		if d, ok := s.r.(readDeadliner); ok && d.SetReadDeadline(at) == nil {
			s.deadline, s.deadlineAt = true, at
		}
	case s.deadline && waited >= time.Millisecond:
		// Waiting for room in the budget is not the peer's doing: it
		// does not count against the peer's time.
		s.deadlineAt = s.deadlineAt.Add(waited)
		_ = s.r.(readDeadliner).SetReadDeadline(s.deadlineAt)
	}
	s.held += need
	return nil
}

// endValue clears the deadline reserve set for the value just read.
func (s *streamSource) endValue() {
	if s.deadline {
		s.deadline = false
		_ = s.r.(readDeadliner).SetReadDeadline(time.Time{})
	}
}

// tooSlow turns the error of a read that hit the deadline reserve set
// into ErrMessageTooSlow, which says what happened.
func (s *streamSource) tooSlow(err error) error {
	var te interface{ Timeout() bool }
	if !s.deadline || !errors.As(err, &te) || !te.Timeout() {
		return err
	}
	return fmt.Errorf("%w: a message holding %d bytes of the server's read budget did not arrive whole within %s; the connection is closed",
		ErrMessageTooSlow, s.held, s.readTimeout)
}

// release gives back what the source holds of the budget. Only the
// reading goroutine calls it.
func (s *streamSource) release() {
	if s.held > 0 {
		s.budget.release(s.held)
		s.held = 0
	}
}

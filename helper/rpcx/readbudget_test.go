package rpcx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"
)

// binValue is a msgpack bin32 value of n zero bytes.
func binValue(n int) []byte {
	return append([]byte{0xc6, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, make([]byte, n)...)
}

func TestMessagesBeingReadShareOneByteBudget(t *testing.T) {
	budget := newReadBudget(context.Background(), 256<<10)
	budget.wait = 50 * time.Millisecond
	scanner := func(r io.Reader) *frameScanner {
		f := newFrameScanner(r, DefaultMaxMessageSize)
		f.src.budget = budget
		return f
	}

	// The first message holds most of the budget while it is current.
	a := scanner(bytes.NewReader(append(binValue(300<<10), 0xc0)))
	if _, err := a.next(); err != nil {
		t.Fatal(err)
	}
	// A second, as large, cannot be read while the first holds its bytes.
	b := scanner(bytes.NewReader(binValue(300 << 10)))
	if _, err := b.next(); !errors.Is(err, ErrServerBusy) {
		t.Fatalf("a second large message while the budget is spent: %v, want ErrServerBusy", err)
	}
	b.src.release() // as serveCodec does when its connection ends
	// Once the first connection moves on to its next message, the bytes
	// are free again.
	if _, err := a.next(); err != nil {
		t.Fatal(err)
	}
	c := scanner(bytes.NewReader(binValue(300 << 10)))
	if _, err := c.next(); err != nil {
		t.Fatalf("a large message after the budget was given back: %v", err)
	}
	c.src.release()
	if !budget.sem.TryAcquire(budget.size) {
		t.Fatal("the budget was not given back in full")
	}
}

func TestAMessageLargerThanTheWholeBudgetIsRefused(t *testing.T) {
	budget := newReadBudget(context.Background(), 128<<10)
	f := newFrameScanner(bytes.NewReader(binValue(512<<10)), DefaultMaxMessageSize)
	f.src.budget = budget
	start := time.Now()
	if _, err := f.next(); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("want ErrMessageTooLarge, got %v", err)
	}
	if waited := time.Since(start); waited > budget.wait/2 {
		t.Fatalf("a message that can never fit waited %s for room", waited)
	}
}

// gateWriter is a connection whose writes wait for a gate, as a peer that
// does not read makes them wait; what it was sent is kept.
type gateWriter struct {
	started chan struct{}
	gate    chan struct{}
	mu      sync.Mutex
	sent    bytes.Buffer
}

func (w *gateWriter) Read(p []byte) (int, error) { select {} }
func (w *gateWriter) Close() error               { return nil }
func (w *gateWriter) Write(p []byte) (int, error) {
	if w.gate != nil {
		w.started <- struct{}{}
		<-w.gate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent.Write(p)
}

func TestAnswersWaitingForSlowReadersShareOneByteBudget(t *testing.T) {
	budget := newWriteBudget(1 << 20)
	slow := &gateWriter{started: make(chan struct{}, 1), gate: make(chan struct{})}
	quick := &gateWriter{}
	big := func(seq uint64) (*responseHeader, *EchoReply) {
		return &responseHeader{ServiceMethod: "Test.Big", Seq: seq}, &EchoReply{Data: make([]byte, 700<<10)}
	}

	// An answer to a peer that does not read holds its bytes...
	done := make(chan error, 1)
	go func() {
		h, b := big(1)
		done <- newMsgCodec(slow, DefaultMaxMessageSize).writeAnswer(h, b, budget)
	}()
	<-slow.started

	// ...so another large answer meanwhile is refused at once with "server
	// busy", instead of being held too.
	h, b := big(2)
	qc := newMsgCodec(quick, DefaultMaxMessageSize)
	if err := qc.writeAnswer(h, b, budget); err != nil {
		t.Fatal(err)
	}
	var resp rpc.Response
	dec := newMsgCodec(readOnly{bytes.NewReader(quick.sent.Bytes())}, DefaultMaxMessageSize)
	if err := dec.ReadResponseHeader(&resp); err != nil {
		t.Fatal(err)
	}
	if resp.Seq != 2 || !strings.Contains(resp.Error, "server busy") || !strings.Contains(resp.Error, "write budget") {
		t.Fatalf("answer over the write budget: %+v", resp)
	}

	// Once the slow peer reads, the bytes are free again.
	close(slow.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	quick.sent.Reset()
	h, b = big(3)
	if err := qc.writeAnswer(h, b, budget); err != nil {
		t.Fatal(err)
	}
	dec = newMsgCodec(readOnly{bytes.NewReader(quick.sent.Bytes())}, DefaultMaxMessageSize)
	resp = rpc.Response{}
	var reply EchoReply
	if err := dec.ReadResponseHeader(&resp); err != nil || resp.Error != "" {
		t.Fatalf("answer after the budget was freed: %v %+v", err, resp)
	}
	if err := dec.ReadResponseBody(&reply); err != nil || len(reply.Data) != 700<<10 {
		t.Fatalf("body: %v, %d bytes", err, len(reply.Data))
	}
}

// nilArray is a msgpack array32 of n nils: a message made of one-byte
// values, which the scanner reads a byte at a time rather than as one
// payload.
func nilArray(n int) []byte {
	b := []byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	return append(b, bytes.Repeat([]byte{0xc0}, n)...)
}

// A message of many small values holds as many bytes as one payload of
// the same size, and takes them from the same budget: else a peer could
// make the server hold the message size limit on every stream it opens.
func TestMessagesOfSmallValuesShareTheByteBudget(t *testing.T) {
	budget := newReadBudget(context.Background(), 256<<10)
	budget.wait = 50 * time.Millisecond
	scanner := func(r io.Reader) *frameScanner {
		f := newFrameScanner(r, DefaultMaxMessageSize)
		f.src.budget = budget
		return f
	}

	a := scanner(bytes.NewReader(append(nilArray(300<<10), 0xc0)))
	if _, err := a.next(); err != nil {
		t.Fatal(err)
	}
	if a.src.held < 300<<10-keepBufCap {
		t.Fatalf("a %d-byte message of small values holds %d bytes of the budget", 300<<10, a.src.held)
	}
	b := scanner(bytes.NewReader(nilArray(300 << 10)))
	if _, err := b.next(); !errors.Is(err, ErrServerBusy) {
		t.Fatalf("a second large message of small values while the budget is spent: %v, want ErrServerBusy", err)
	}
	b.src.release()
	if _, err := a.next(); err != nil {
		t.Fatal(err)
	}
	if !budget.sem.TryAcquire(budget.size) {
		t.Fatal("the budget was not given back in full")
	}
}

package rpcx

import (
	"bytes"
	"context"
	"errors"
	"io"
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

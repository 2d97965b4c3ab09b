package rpcx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxReadBytes bounds the bytes that messages being read hold at
// once across every connection of a Server, beyond a small allowance per
// connection (keepBufCap). One message may be up to the message size limit
// (16 MiB by default), and a peer may open many streams: without a shared
// bound, a thousand streams each sending most of a large message would make
// the server hold gigabytes before a single one is complete.
const DefaultMaxReadBytes = 256 << 20

// readBudgetWait is how long a read waits for room in the budget before the
// connection or stream is given up. Waiting at all is rare: it takes many
// large messages arriving at once.
const readBudgetWait = 10 * time.Second

// ErrServerBusy means the server could not take a message now because it is
// already reading as many bytes as its read budget allows.
var ErrServerBusy = errors.New("rpcx: server busy")

// readBudget is the server-wide byte budget for messages being read.
type readBudget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
	ctx  context.Context
}

func newReadBudget(ctx context.Context, size int64) *readBudget {
	return &readBudget{sem: semaphore.NewWeighted(size), size: size, wait: readBudgetWait, ctx: ctx}
}

// acquire takes n more bytes for a reader that already holds held, waiting
// a bounded time for them. A message that could never fit is refused at
// once.
func (b *readBudget) acquire(n, held int64) error {
	if n+held > b.size {
		return fmt.Errorf("%w: a message needs more than the %d-byte read budget", ErrMessageTooLarge, b.size)
	}
	if b.sem.TryAcquire(n) {
		return nil
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(ctx, n); err != nil {
		return fmt.Errorf("%w: no room to read a %d-byte part of a message within %s", ErrServerBusy, n, b.wait)
	}
	return nil
}

func (b *readBudget) release(n int64) { b.sem.Release(n) }

// DefaultMaxPendingWriteBytes bounds the bytes of encoded answers that
// every connection of a Server holds at once while they wait for, or are
// in, a write (see msgCodec.writeAnswer).
const DefaultMaxPendingWriteBytes = 256 << 20

// writeBudget is the server-wide byte budget for answers being written.
type writeBudget struct {
	sem  *semaphore.Weighted
	size int64
}

func newWriteBudget(size int64) *writeBudget {
	return &writeBudget{sem: semaphore.NewWeighted(size), size: size}
}

func (b *writeBudget) tryAcquire(n int64) bool { return n <= b.size && b.sem.TryAcquire(n) }
func (b *writeBudget) release(n int64)         { b.sem.Release(n) }

func (b *writeBudget) busyError(n int) string {
	return fmt.Sprintf("%v: answers waiting for their readers already hold the server's %d-byte write budget; this %d-byte answer was dropped, retry later",
		ErrServerBusy, b.size, n)
}

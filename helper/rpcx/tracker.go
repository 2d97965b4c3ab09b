package rpcx

import (
	"io"
	"sync"
)

// tracker owns the goroutines and live connections of one Serve call. Once
// closeAll has run, nothing new can start, so wait cannot race with a late
// Add and returns only when every goroutine it ever started has returned.
type tracker struct {
	mu     sync.Mutex
	closed bool
	live   map[io.Closer]struct{}
	wg     sync.WaitGroup
}

func newTracker() *tracker {
	return &tracker{live: make(map[io.Closer]struct{})}
}

// add registers c to be closed by closeAll. It returns false, and the caller
// must close c itself, if the tracker is already closed.
func (t *tracker) add(c io.Closer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.live[c] = struct{}{}
	return true
}

// remove forgets c; its owner closes it.
func (t *tracker) remove(c io.Closer) {
	t.mu.Lock()
	delete(t.live, c)
	t.mu.Unlock()
}

// goTracked runs fn in a goroutine that wait waits for. It returns false,
// without running fn, if the tracker is already closed.
func (t *tracker) goTracked(fn func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		fn()
	}()
	return true
}

// closeAll stops new work and closes every registered closer, which unblocks
// the goroutines reading from them.
func (t *tracker) closeAll() {
	t.mu.Lock()
	t.closed = true
	live := t.live
	t.live = make(map[io.Closer]struct{})
	t.mu.Unlock()
	for c := range live {
		c.Close()
	}
}

// wait returns when every goroutine started by goTracked has returned.
func (t *tracker) wait() {
	t.wg.Wait()
}

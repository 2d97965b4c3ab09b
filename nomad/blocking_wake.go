package nomad

import "sync"

// Every blocking query stops waiting when the state store it read is
// abandoned (a snapshot restore replaced it: the query re-runs on the new
// one) or when the server stops. A waiter selects on a channel for each,
// and a select holds a runtime record per channel per waiter; with a
// fleet's clients each holding a query open, that is paid per node. So
// the two are merged into one channel per state store, closed when
// either happens, made by the first query that reads the store.

// storeWake hands out the merged channel of the current state store. Its
// zero value is ready to use.
type storeWake struct {
	mu      sync.Mutex
	abandon <-chan struct{} // the store the channel is for
	ch      chan struct{}
}

// of returns the channel closed once abandon or stop is: abandon is a
// state store's AbandonCh, stop the server's done channel. A goroutine
// per store waits for either; it ends with the store or the server.
func (w *storeWake) of(abandon, stop <-chan struct{}) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil && w.abandon == abandon {
		return w.ch
	}
	ch := make(chan struct{})
	go func() {
		select {
		case <-abandon:
		case <-stop:
		}
		close(ch)
	}()
	w.abandon, w.ch = abandon, ch
	return ch
}

package nomad

import (
	"sync"
	"time"

	"github.com/drover-sched/drover/helper/clock"
)

// timerWatch is a Clock that remembers the timers made through it, so a
// test can see what a component waits for without the component keeping
// a record for it. It sees only NewTimer timers; AfterFunc passes through.
type timerWatch struct {
	clock.Clock
	mu   sync.Mutex
	live map[*watchedTimer]time.Time // deadline of each timer not stopped
}

func watchTimers(c clock.Clock) clock.Clock {
	return &timerWatch{Clock: c, live: map[*watchedTimer]time.Time{}}
}

func (w *timerWatch) NewTimer(d time.Duration) clock.Timer {
	t := &watchedTimer{Timer: w.Clock.NewTimer(d), w: w}
	w.mu.Lock()
	w.live[t] = w.Clock.Now().Add(d)
	w.mu.Unlock()
	return t
}

func (w *timerWatch) NewTimerAt(when time.Time) clock.Timer {
	t := &watchedTimer{Timer: w.Clock.NewTimerAt(when), w: w}
	w.mu.Lock()
	w.live[t] = when
	w.mu.Unlock()
	return t
}

// waitingFor returns the deadline of the one timer not stopped, or zero
// when there is none; ok is false when there are several.
func (w *timerWatch) waitingFor() (deadline time.Time, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.live {
		deadline = d
	}
	return deadline, len(w.live) <= 1
}

// watchedTimer is a timer a timerWatch made. A timer that fired but was
// not stopped still counts: its owner has not moved on from it yet.
type watchedTimer struct {
	clock.Timer
	w *timerWatch
}

func (t *watchedTimer) Stop() bool {
	t.w.mu.Lock()
	delete(t.w.live, t)
	t.w.mu.Unlock()
	return t.Timer.Stop()
}

func (t *watchedTimer) Reset(d time.Duration) bool {
	t.w.mu.Lock()
	t.w.live[t] = t.w.Clock.Now().Add(d)
	t.w.mu.Unlock()
	return t.Timer.Reset(d)
}

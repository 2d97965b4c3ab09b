//go:build benchcluster

package cluster

import (
	"os"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

// electionWatch records when any of the servers became leader, through
// raft's observers: every new term of leadership re-arms the failover TTL
// of every live node, so elections during the storm delay the marks.
type electionWatch struct {
	mu        sync.Mutex
	from      time.Time
	at        []time.Time
	ch        chan raft.Observation
	observers map[*raft.Raft]*raft.Observer
	done      chan struct{}
}

func watchElections(t *testing.T, servers []*nomad.Server) *electionWatch {
	w := &electionWatch{ch: make(chan raft.Observation, 64), observers: map[*raft.Raft]*raft.Observer{}, done: make(chan struct{})}
	for _, s := range servers {
		o := raft.NewObserver(w.ch, false, func(o *raft.Observation) bool {
			st, ok := o.Data.(raft.RaftState)
			return ok && st == raft.Leader
		})
		s.Raft().RegisterObserver(o)
		w.observers[s.Raft()] = o
	}
	go func() {
		defer close(w.done)
		for range w.ch {
			w.mu.Lock()
			w.at = append(w.at, time.Now())
			w.mu.Unlock()
		}
	}()
	return w
}

// since counts only the elections from t on.
func (w *electionWatch) since(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.from = t
}

func (w *electionWatch) times() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Time
	for _, at := range w.at {
		if !at.Before(w.from) {
			out = append(out, at)
		}
	}
	return out
}

func (w *electionWatch) count() int { return len(w.times()) }

func (w *electionWatch) stop() {
	for r, o := range w.observers {
		r.DeregisterObserver(o)
	}
	close(w.ch)
	<-w.done
}

// startCPUProfile profiles the benchmark's process (the servers) until the
// returned stop, if -storm-cpu-profile is set.
func startCPUProfile(t *testing.T, path string) (stop func()) {
	if *flagStormCPU == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}
}

// nodeDownEntries counts the raft entries after index0 that marked nodes
// down or disconnected for a missed heartbeat: the distinct indexes of
// those node events.
func nodeDownEntries(t *testing.T, s *nomad.Server, index0 uint64) int {
	it, err := s.State().Nodes(nil)
	if err != nil {
		t.Fatal(err)
	}
	indexes := map[uint64]bool{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		for _, e := range raw.(*structs.Node).Events {
			if e.CreateIndex > index0 && e.Message == "Node heartbeat missed" {
				indexes[e.CreateIndex] = true
			}
		}
	}
	return len(indexes)
}

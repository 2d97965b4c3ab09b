//go:build benchcluster

package cluster

import (
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
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

// procStarvation is what the servers' process got of the machine over a
// stretch of time: its CPU time, the time its threads waited on the
// kernel's run queues for a CPU (schedstat), and how long its goroutines
// waited to run and how long GC stopped them (runtime/metrics). Waiting
// that dwarfs the CPU used is starvation by other processes; long
// goroutine waits with little kernel wait are the process's own backlog.
type procStarvation struct {
	CPUSec          float64
	RunQueueWaitSec float64
	GoSchedP99Ms    float64 // a runnable goroutine's wait for a thread
	GoSchedMaxMs    float64 // lower bound of the highest bucket seen
	GCPauseMaxMs    float64
}

type procSample struct {
	cpu, wait time.Duration
	sched     *metrics.Float64Histogram
	gc        *metrics.Float64Histogram
}

const (
	metricSchedLatency = "/sched/latencies:seconds"
	metricGCPauses     = "/sched/pauses/total/gc:seconds"
)

func sampleProc() procSample {
	var s procSample
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		run, _ := strconv.ParseInt(f[0], 10, 64)
		wait, _ := strconv.ParseInt(f[1], 10, 64)
		s.cpu += time.Duration(run)
		s.wait += time.Duration(wait)
	}
	ms := []metrics.Sample{{Name: metricSchedLatency}, {Name: metricGCPauses}}
	metrics.Read(ms)
	if ms[0].Value.Kind() == metrics.KindFloat64Histogram {
		s.sched = ms[0].Value.Float64Histogram()
	}
	if ms[1].Value.Kind() == metrics.KindFloat64Histogram {
		s.gc = ms[1].Value.Float64Histogram()
	}
	return s
}

// starvationSince is what happened between from and now.
func starvationSince(from procSample) procStarvation {
	to := sampleProc()
	out := procStarvation{CPUSec: (to.cpu - from.cpu).Seconds(), RunQueueWaitSec: (to.wait - from.wait).Seconds()}
	if from.sched != nil && to.sched != nil {
		out.GoSchedP99Ms, out.GoSchedMaxMs = histDelta(from.sched, to.sched, 0.99)
	}
	if from.gc != nil && to.gc != nil {
		_, out.GCPauseMaxMs = histDelta(from.gc, to.gc, 1)
	}
	return out
}

// histDelta is the q quantile and the highest non-empty bucket of the
// samples added to a cumulative histogram between a and b, in ms (each a
// bucket's lower bound).
func histDelta(a, b *metrics.Float64Histogram, q float64) (quantile, highest float64) {
	var total uint64
	counts := make([]uint64, len(b.Counts))
	for i := range b.Counts {
		counts[i] = b.Counts[i] - a.Counts[i]
		total += counts[i]
	}
	if total == 0 {
		return 0, 0
	}
	want := uint64(math.Ceil(float64(total) * q))
	var seen uint64
	quantile = -1
	for i, c := range counts {
		if c == 0 {
			continue
		}
		seen += c
		lower := max(b.Buckets[i], 0) * 1000
		if quantile < 0 && seen >= want {
			quantile = lower
		}
		highest = lower
	}
	return quantile, highest
}

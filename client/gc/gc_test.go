package gc

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
)

type fleet struct {
	mu        sync.Mutex
	destroyed []string
}

func (f *fleet) destroyer(id string) func() error {
	return func() error {
		f.mu.Lock()
		f.destroyed = append(f.destroyed, id)
		f.mu.Unlock()
		return nil
	}
}

func (f *fleet) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.destroyed...)
}

func TestCollectByCountRemovesOldestFirst(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	f := &fleet{}
	c := New(Config{MaxAllocs: 3, Clock: clk, LiveAllocs: func() int { return 1 }})
	t0 := clk.Now()
	for i, id := range []string{"c", "a", "d", "b"} {
		c.Mark(id, t0.Add(time.Duration(i)*time.Minute), f.destroyer(id))
	}
	// 1 live + 4 terminal > 3: the two oldest terminal ones go.
	if n := c.Collect(); n != 2 {
		t.Fatalf("destroyed %d", n)
	}
	if got := f.list(); len(got) != 2 || got[0] != "c" || got[1] != "a" {
		t.Fatalf("destroyed %v, want the oldest [c a]", got)
	}
	if got := c.Eligible(); len(got) != 2 || got[0] != "d" {
		t.Fatalf("left %v", got)
	}
}

func TestCollectByAge(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	f := &fleet{}
	c := New(Config{AllocDirTTL: time.Hour, Clock: clk})
	c.Mark("old", clk.Now(), f.destroyer("old"))
	clk.Advance(50 * time.Minute)
	c.Mark("new", clk.Now(), f.destroyer("new"))
	if n := c.Collect(); n != 0 {
		t.Fatalf("nothing is old enough yet, destroyed %d", n)
	}
	clk.Advance(11 * time.Minute)
	c.Collect()
	if got := f.list(); len(got) != 1 || got[0] != "old" {
		t.Fatalf("destroyed %v", got)
	}
}

func TestCollectByDiskUsageAFewAtATime(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	f := &fleet{}
	usage := 95.0
	var mu sync.Mutex
	c := New(Config{DiskUsageThreshold: 80, MaxPerPass: 2, Clock: clk,
		DiskUsage: func() (float64, float64, error) {
			mu.Lock()
			defer mu.Unlock()
			return usage, 0, nil
		}})
	for i := 0; i < 5; i++ {
		id := string(rune('a' + i))
		c.Mark(id, clk.Now().Add(time.Duration(i)), func() error {
			mu.Lock()
			usage -= 5
			mu.Unlock()
			return f.destroyer(id)()
		})
	}
	if n := c.Collect(); n != 2 {
		t.Fatalf("first pass destroyed %d, want MaxPerPass=2", n)
	}
	c.Collect()
	got := f.list()
	sort.Strings(got)
	if len(got) != 3 {
		t.Fatalf("destroyed %v; usage should drop to 80 after three", got)
	}
}

func TestRunCollectsOnJitteredInterval(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	f := &fleet{}
	c := New(Config{Interval: time.Minute, MaxAllocs: 1, Clock: clk})
	c.Mark("a", clk.Now(), f.destroyer("a"))
	c.Mark("b", clk.Now().Add(time.Second), f.destroyer("b"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	clk.WaitForTimers(1, 5*time.Second)
	clk.Advance(54 * time.Second) // below the jitter's lower bound
	if len(f.list()) != 0 {
		t.Fatal("collected before the interval")
	}
	clk.Advance(12 * time.Second)
	testutil.WaitFor(t, "a pass", func() bool { return len(f.list()) == 1 })
	cancel()
	<-done
}

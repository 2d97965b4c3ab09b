package gc

import (
	"context"
	"math/rand"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
)

// Config configures a Collector.
type Config struct {
	Interval            time.Duration
	MaxAllocs           int
	DiskUsageThreshold  float64
	InodeUsageThreshold float64
	AllocDirTTL         time.Duration
	MaxPerPass          int
	Clock               clock.Clock
	Logger              hclog.Logger
	Seed                int64
	// DiskUsage samples the data dir's disk and inode use, in percent.
	DiskUsage func() (disk, inodes float64, err error)
	// LiveAllocs counts the allocs the client runs that are not eligible.
	LiveAllocs func() int
}

// Collector is the client's alloc GC.
type Collector struct {
	cfg     Config
	clock   clock.Clock
	logger  hclog.Logger
	rnd     *rand.Rand
	trigger chan struct{}

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	id         string
	terminalAt time.Time
	destroy    func() error
}

// New returns a collector; call Run in a goroutine, or Collect directly.
func New(cfg Config) *Collector {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.MaxPerPass <= 0 {
		cfg.MaxPerPass = 10
	}
	if cfg.LiveAllocs == nil {
		cfg.LiveAllocs = func() int { return 0 }
	}
	return &Collector{cfg: cfg, clock: clock.OrReal(cfg.Clock), logger: cfg.Logger.Named("gc"),
		rnd: rand.New(rand.NewSource(cfg.Seed)), trigger: make(chan struct{}, 1), entries: map[string]*entry{}}
}

// Mark makes a terminal alloc eligible; destroy removes its directory.
func (c *Collector) Mark(id string, terminalAt time.Time, destroy func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[id]; !ok {
		c.entries[id] = &entry{id: id, terminalAt: terminalAt, destroy: destroy}
	}
}

// Destroy removes a marked alloc's directory now, whatever the limits say,
// and reports whether it was marked. Only one caller destroys an alloc: the
// entry is taken out under the lock first.
func (c *Collector) Destroy(id, reason string) bool {
	c.mu.Lock()
	e, ok := c.entries[id]
	delete(c.entries, id)
	c.mu.Unlock()
	if !ok {
		return false
	}
	c.logger.Info("garbage collecting alloc dir", "alloc_id", id, "reason", reason)
	if err := e.destroy(); err != nil {
		c.logger.Warn("failed to destroy alloc dir", "alloc_id", id, "error", err)
	}
	return true
}

// Remove forgets an alloc (it was destroyed some other way).
func (c *Collector) Remove(id string) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}

// Eligible returns the IDs of eligible allocs, oldest first.
func (c *Collector) Eligible() []string {
	var out []string
	for _, e := range c.sorted() {
		out = append(out, e.id)
	}
	return out
}

func (c *Collector) sorted() []*entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].terminalAt.Equal(out[j].terminalAt) {
			return out[i].terminalAt.Before(out[j].terminalAt)
		}
		return out[i].id < out[j].id
	})
	return out
}

// Trigger asks for a pass soon (for example when new allocs arrive and the
// count limit may be exceeded).
func (c *Collector) Trigger() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// Run collects on a jittered interval until ctx ends.
func (c *Collector) Run(ctx context.Context) {
	for {
		wait := c.cfg.Interval
		wait += time.Duration(c.rnd.Int63n(int64(wait)/5+1)) - wait/10 // +/-10%
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(wait):
		case <-c.trigger:
		}
		c.Collect()
	}
}

// Collect runs one pass and returns how many allocs it destroyed.
func (c *Collector) Collect() int {
	now := c.clock.Now()
	cands := c.sorted()
	destroyed := 0
	take := func(reason string) bool {
		if len(cands) == 0 || destroyed >= c.cfg.MaxPerPass {
			return false
		}
		e := cands[0]
		cands = cands[1:]
		c.Remove(e.id)
		c.logger.Info("garbage collecting alloc dir", "alloc_id", e.id, "reason", reason)
		if err := e.destroy(); err != nil {
			c.logger.Warn("failed to destroy alloc dir", "alloc_id", e.id, "error", err)
		}
		destroyed++
		return true
	}
	if ttl := c.cfg.AllocDirTTL; ttl > 0 {
		for len(cands) > 0 && now.Sub(cands[0].terminalAt) > ttl {
			if !take("older than alloc dir TTL") {
				return destroyed
			}
		}
	}
	if max := c.cfg.MaxAllocs; max > 0 {
		for c.cfg.LiveAllocs()+len(cands) > max {
			if !take("more allocs than gc_max_allocs") {
				return destroyed
			}
		}
	}
	if c.cfg.DiskUsage != nil {
		for {
			disk, inodes, err := c.cfg.DiskUsage()
			if err != nil {
				c.logger.Warn("failed to sample disk usage", "error", err)
				break
			}
			over := (c.cfg.DiskUsageThreshold > 0 && disk > c.cfg.DiskUsageThreshold) ||
				(c.cfg.InodeUsageThreshold > 0 && inodes > c.cfg.InodeUsageThreshold)
			if !over || !take("disk usage above threshold") {
				break
			}
		}
	}
	return destroyed
}

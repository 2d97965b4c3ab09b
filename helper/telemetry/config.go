package telemetry

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config is the agent's telemetry block, in Nomad's keys.
type Config struct {
	// CollectionInterval is how often periodic gauges (the broker's
	// queues, the client's allocations, the Go runtime) are emitted.
	CollectionInterval time.Duration
	// DisableHostname leaves the host name out of gauge names; by default
	// it goes in front of them (go-metrics' convention, which Nomad keeps).
	DisableHostname bool
	// UseNodeName puts the agent's node name there instead of the host
	// name, even with DisableHostname.
	UseNodeName bool
	// PrometheusMetrics enables /v1/metrics?format=prometheus.
	PrometheusMetrics bool
	// PublishAllocationMetrics emits every running task's resource usage
	// (nomad.client.allocs.memory.*, .cpu.*) each interval.
	PublishAllocationMetrics bool
	// PublishNodeMetrics emits the host's resource usage
	// (nomad.client.host.*) each interval.
	PublishNodeMetrics bool
	// PrefixFilter is Nomad's prefix_filter: "+prefix" allows, "-prefix"
	// blocks, the longest matching prefix wins.
	PrefixFilter []string
	// FilterDefault is whether a metric no filter matches is kept (nil:
	// true, as in Nomad).
	FilterDefault *bool
	// InMemoryCollectionInterval is the aggregation interval of the
	// in-memory sink /v1/metrics reads, InMemoryRetentionPeriod how long
	// intervals are kept.
	InMemoryCollectionInterval time.Duration
	InMemoryRetentionPeriod    time.Duration
}

// Nomad's defaults.
const (
	DefaultCollectionInterval         = time.Second
	DefaultInMemoryCollectionInterval = 10 * time.Second
	DefaultInMemoryRetentionPeriod    = time.Minute
)

// Bounds: a shorter collection interval makes the agent spend its time
// emitting gauges, and the in-memory sink holds one set of aggregates per
// interval, so the number of intervals kept is bounded too.
const (
	MinCollectionInterval = 100 * time.Millisecond
	MaxCollectionInterval = time.Hour
	MaxRetainedIntervals  = 1000
)

// WithDefaults fills the intervals left unset.
func (c Config) WithDefaults() Config {
	if c.CollectionInterval == 0 {
		c.CollectionInterval = DefaultCollectionInterval
	}
	if c.InMemoryCollectionInterval == 0 {
		c.InMemoryCollectionInterval = DefaultInMemoryCollectionInterval
	}
	if c.InMemoryRetentionPeriod == 0 {
		c.InMemoryRetentionPeriod = DefaultInMemoryRetentionPeriod
	}
	c.PrefixFilter = append([]string(nil), c.PrefixFilter...)
	return c
}

// Validate checks a configuration after WithDefaults. Each error names the
// key of the telemetry block.
func (c Config) Validate() error {
	var errs []error
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"collection_interval", c.CollectionInterval},
		{"in_memory_collection_interval", c.InMemoryCollectionInterval},
	} {
		if d.v < MinCollectionInterval || d.v > MaxCollectionInterval {
			errs = append(errs, fmt.Errorf("telemetry.%s must be between %s and %s, got %s", d.key, MinCollectionInterval, MaxCollectionInterval, d.v))
		}
	}
	if c.InMemoryRetentionPeriod < c.InMemoryCollectionInterval {
		errs = append(errs, fmt.Errorf("telemetry.in_memory_retention_period (%s) must be at least in_memory_collection_interval (%s)",
			c.InMemoryRetentionPeriod, c.InMemoryCollectionInterval))
	} else if c.InMemoryCollectionInterval > 0 && c.InMemoryRetentionPeriod/c.InMemoryCollectionInterval > MaxRetainedIntervals {
		errs = append(errs, fmt.Errorf("telemetry.in_memory_retention_period (%s) may hold at most %d intervals of in_memory_collection_interval (%s)",
			c.InMemoryRetentionPeriod, MaxRetainedIntervals, c.InMemoryCollectionInterval))
	}
	for i, f := range c.PrefixFilter {
		if _, _, err := parseFilter(f); err != nil {
			errs = append(errs, fmt.Errorf("telemetry.prefix_filter[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// parseFilter splits one prefix_filter rule into its prefix and whether it
// allows.
func parseFilter(rule string) (prefix string, allow bool, err error) {
	rule = strings.TrimSpace(rule)
	if len(rule) < 2 || (rule[0] != '+' && rule[0] != '-') {
		return "", false, fmt.Errorf("%q must be a metric name prefix after + (allow) or - (block), such as \"-nomad.raft\"", rule)
	}
	return rule[1:], rule[0] == '+', nil
}

// filters splits PrefixFilter into allowed and blocked prefixes.
func (c Config) filters() (allowed, blocked []string) {
	for _, f := range c.PrefixFilter {
		if p, allow, err := parseFilter(f); err == nil {
			if allow {
				allowed = append(allowed, p)
			} else {
				blocked = append(blocked, p)
			}
		}
	}
	return allowed, blocked
}

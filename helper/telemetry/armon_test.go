package telemetry

import armon "github.com/armon/go-metrics"

// armonIncr emits through armon/go-metrics' global handler, as
// hashicorp/raft does.
func armonIncr(key []string) { armon.IncrCounter(key, 1) }

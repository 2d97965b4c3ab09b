package fuzzseed

import "runtime/metrics"

const allocsMetric = "/gc/heap/allocs:bytes"

// AllocatedBytes returns how many bytes the process has allocated on the
// heap since it started. The difference between two readings is what the
// code in between allocated (plus whatever other goroutines allocated
// meanwhile, so bounds built on it must leave room for that). Unlike
// runtime.ReadMemStats it does not stop the world, so a fuzz target can
// read it on every input.
//
// The runtime counts small allocations a span at a time, so a reading can
// be ahead of the truth by up to one span per size class: tens of KiB,
// nothing against the MiB-scale bounds the targets check.
func AllocatedBytes() uint64 {
	s := []metrics.Sample{{Name: allocsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		// The metric exists in every Go release since 1.16; a runtime that
		// drops it should fail loudly, not make every bound pass.
		panic("fuzzseed: runtime metric " + allocsMetric + " is not available")
	}
	return s[0].Value.Uint64()
}

package fuzzseed

import "runtime"

// AllocatedBytes returns how many bytes the process has allocated on the
// heap since it started. The difference between two readings is what the
// code in between allocated, plus whatever other goroutines allocated
// meanwhile, so bounds built on it must leave room for that.
//
// It reads runtime.MemStats, which stops the world for some microseconds,
// because that is exact: the cheaper runtime/metrics reading counts small
// allocations only when their span is handed back, so it lags by up to a
// span per size class and then counts them all at once, hundreds of KiB
// of noise around a single decode.
func AllocatedBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

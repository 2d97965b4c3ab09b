package nomad

import "runtime"

// liveHeap is HeapAlloc after two collections: what is reachable.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

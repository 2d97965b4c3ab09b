package childproc

import "syscall"

// The heap watchdog samples, so one allocation far past the limit (a
// string of gigabytes made in one call) is written to memory before the
// watchdog can stop it. The kernel bounds that: the child caps its own
// data segment, which on Linux counts every writable private mapping and
// so the Go heap, at dataLimit. An allocation past it fails at once, and
// the Go runtime then dies with "out of memory", which the parent reports
// as the memory limit.
//
// dataOverhead is what a Go process maps before it allocates anything
// (its heap index, GC metadata, the executable's data): about 120 MiB for
// Drover's binary.
const dataOverhead = 256 << 20

// dataLimit is the data segment allowed a child with the given heap
// limit: room for the heap, a collection's worth of garbage, and the
// runtime's own mappings.
func dataLimit(heap uint64) uint64 { return 2*heap + dataOverhead }

// limitData caps this process's data segment for heap. A race-enabled
// binary (a test binary built with -race) maps terabytes of shadow
// memory, so it is left uncapped and relies on the watchdog alone.
func limitData(heap uint64) error {
	if raceEnabled {
		return nil
	}
	l := dataLimit(heap)
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: l, Max: l})
}

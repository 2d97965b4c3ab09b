//go:build !race

package structs

import (
	"runtime"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
)

// TestTaskEventDecodeAllocatesLessThanTheFlatStruct: decoding a running
// task's events (the common fields only) allocates no more often than
// decoding the flat struct did, and fewer bytes: the wire struct comes
// from a pool and no extra part is made. (Not under -race, whose pools
// drop entries at random.)
func TestTaskEventDecodeAllocatesLessThanTheFlatStruct(t *testing.T) {
	at := time.Unix(1_700_000_000, 0).UTC()
	flat := &flatTaskState{State: TaskStateRunning, StartedAt: at, Events: []*flatTaskEvent{
		{Type: TaskReceived, Time: at.UnixNano(), DisplayMessage: "Task received by client"},
		{Type: TaskSetup, Time: at.UnixNano(), Message: "Building Task Directory", DisplayMessage: "Building Task Directory"},
		{Type: TaskStarted, Time: at.UnixNano(), DisplayMessage: "Task started by client"},
	}}
	b := mustRPCEncode(t, flat)
	measure := func(out func() any) (allocs float64, bytes uint64) {
		const runs = 200
		decode := func() {
			if err := rpcx.Decode(b, out()); err != nil {
				t.Fatal(err)
			}
		}
		decode() // the first decode of a type builds the codec's tables
		allocs = testing.AllocsPerRun(runs, decode)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			decode()
		}
		runtime.ReadMemStats(&after)
		return allocs, (after.TotalAlloc - before.TotalAlloc) / runs
	}
	flatAllocs, flatBytes := measure(func() any { return new(flatTaskState) })
	allocs, bytes := measure(func() any { return new(TaskState) })
	if allocs > flatAllocs {
		t.Errorf("decoding allocates %.0f times, the flat struct %.0f", allocs, flatAllocs)
	}
	// Each event is 176 bytes smaller; allow for noise, not for a
	// wire struct or an extra part per event.
	if bytes+3*128 > flatBytes {
		t.Errorf("decoding allocates %d bytes, the flat struct %d: want at least 384 fewer", bytes, flatBytes)
	}
}

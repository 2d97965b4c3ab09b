package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkStoreWriteAllocs is the CPU a store spends per alloc on what
// it shares and interns: a plan's batch of 100 new allocs (with
// metrics, in a deployment), then their clients' pending and running
// reports, each as a raft entry decodes it. One op is one alloc through
// all three writes (ns/op is per alloc).
func BenchmarkStoreWriteAllocs(b *testing.B) {
	const batch = 100
	s := testStateStore(b)
	at := time.Unix(1_700_000_000, 0)
	type entry struct{ allocs, pending, running []*structs.Allocation }
	rounds := (b.N + batch - 1) / batch
	entries := make([]entry, rounds)
	index := uint64(10)
	for r := range entries {
		// A job per batch, so that the job's status (which reads all
		// its allocs on every write) does not grow with b.N.
		job := testJob(fmt.Sprintf("bench-web-%d", r))
		if err := s.Write(index, func(tx *Txn) error { return tx.UpsertJob(job) }); err != nil {
			b.Fatal(err)
		}
		depID := fmt.Sprintf("%08x-4444-4000-8000-%012x", r, r)
		if err := s.Write(index+1, func(tx *Txn) error {
			return tx.UpsertDeployment(&structs.Deployment{ID: depID, Namespace: job.Namespace, JobID: job.ID})
		}); err != nil {
			b.Fatal(err)
		}
		index += 2
		for i := r * batch; i < (r+1)*batch; i++ {
			a := heapBenchAlloc(job, "00000001-3333-4000-8000-000000000001", i, fmt.Sprintf("%08x-0000-4000-8000-%012x", i%1000, i%1000))
			a.DeploymentID = depID
			entries[r].allocs = append(entries[r].allocs, a)
			entries[r].pending = append(entries[r].pending, heapBenchReport(a.ID, structs.AllocClientStatusPending, at))
			entries[r].running = append(entries[r].running, heapBenchReport(a.ID, structs.AllocClientStatusRunning, at))
		}
	}
	b.ResetTimer()
	for _, e := range entries {
		if err := s.Write(index, func(tx *Txn) error { return tx.UpsertAllocs(e.allocs) }); err != nil {
			b.Fatal(err)
		}
		if err := s.Write(index+1, func(tx *Txn) error { return tx.UpdateAllocsFromClient(e.pending) }); err != nil {
			b.Fatal(err)
		}
		if err := s.Write(index+2, func(tx *Txn) error { return tx.UpdateAllocsFromClient(e.running) }); err != nil {
			b.Fatal(err)
		}
		index += 3
	}
}

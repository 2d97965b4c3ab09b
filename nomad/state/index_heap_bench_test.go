package state

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// BenchmarkAllocIndexHeap reports what each index of the allocs table
// costs per alloc: the live heap of a table of 20,000 allocs (4 per node,
// one job, one deployment, as a fleet-size service job stores them) with
// every index, less that of the same table without the one index. "all"
// is the table with every index, allocs included (shared by both).
func BenchmarkAllocIndexHeap(b *testing.B) {
	const n = 20_000
	job := testJob("bench-web")
	evalID := decoded(&structs.Evaluation{ID: "00000001-3333-4000-8000-000000000001"}).ID
	allocs := make([]*structs.Allocation, n)
	for i := range allocs {
		node := fmt.Sprintf("%08x-0000-4000-8000-%012x", i/4, i/4)
		allocs[i] = heapBenchAlloc(job, evalID, i, node)
		allocs[i].Job = job
	}
	full := allocsTableSchema()
	// heapOf is the live heap a table with the given schema adds once
	// it holds allocs.
	heapOf := func(b *testing.B, table *memdb.TableSchema) float64 {
		db, err := memdb.NewMemDB(&memdb.DBSchema{Tables: map[string]*memdb.TableSchema{table.Name: table}})
		if err != nil {
			b.Fatal(err)
		}
		before := liveHeap()
		txn := db.Txn(true)
		for _, a := range allocs {
			if err := txn.Insert(table.Name, a); err != nil {
				b.Fatal(err)
			}
		}
		txn.Commit()
		after := liveHeap()
		runtime.KeepAlive(db)
		return float64(int64(after)-int64(before)) / n
	}
	b.Run("all", func(b *testing.B) {
		for range b.N {
			b.ReportMetric(heapOf(b, allocsTableSchema()), "B/alloc")
		}
	})
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range full.Indexes {
			if name != "id" && !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				without := allocsTableSchema()
				delete(without.Indexes, name)
				b.ReportMetric(heapOf(b, allocsTableSchema())-heapOf(b, without), "B/alloc")
			}
		})
	}
}

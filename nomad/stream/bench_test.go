package stream

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkFanOut measures what the broker can deliver when the producer
// is not the limit: batches of 100 allocation events published as fast as
// possible to 10 subscribers that each encode every frame to JSON. It
// reports the events per second delivered, all subscribers together.
func BenchmarkFanOut(b *testing.B) {
	const subscribers, perBatch = 10, 100
	brk := NewBroker(Config{BufferEvents: 1 << 20})
	batches := make([][]structs.Event, b.N)
	for i := range batches {
		evs := make([]structs.Event, perBatch)
		for j := range evs {
			id := fmt.Sprintf("alloc-%d-%d", i, j)
			evs[j] = structs.Event{Topic: structs.TopicAllocation, Type: structs.TypePlanResult, Key: id, Namespace: "default",
				FilterKeys: []string{"web"}, Index: uint64(i + 1), Payload: &structs.AllocEventPayload{Allocation: &structs.Allocation{
					ID: id, Namespace: "default", JobID: "web", TaskGroup: "web", NodeID: "node", DesiredStatus: "run", ClientStatus: "pending"}}}
		}
		batches[i] = evs
	}
	var wg sync.WaitGroup
	for range subscribers {
		sub, err := brk.Subscribe(SubscribeRequest{})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for n := 0; n < b.N; n++ {
				f, err := sub.Next(context.Background())
				if err != nil {
					b.Error(err)
					return
				}
				buf = f.AppendJSON(buf[:0])
			}
		}()
	}
	b.ResetTimer()
	for i, evs := range batches {
		brk.Publish(uint64(i+1), 100, evs)
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N*perBatch*subscribers)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkBufferHeapPerBatch reports the live heap the broker itself
// adds per buffered entry of one event that no subscriber reads, as a
// node's registration or status change makes (the event's payload points
// into the state store, and is counted there).
func BenchmarkBufferHeapPerBatch(b *testing.B) {
	const n = DefaultBufferEvents
	node := &structs.Node{ID: "n1"}
	for range b.N {
		events := make([][]structs.Event, n)
		for i := range events {
			events[i] = []structs.Event{{Topic: structs.TopicNode, Type: structs.TypeNodeRegistration, Key: node.ID, Index: uint64(i + 1),
				Payload: &structs.NodeEventPayload{Node: node}}}
		}
		brk := NewBroker(Config{})
		before := liveHeap()
		for i, evs := range events {
			brk.Publish(uint64(i+1), 1000, evs)
		}
		after := liveHeap()
		b.ReportMetric(float64(int64(after)-int64(before))/n, "B/batch")
		runtime.KeepAlive(brk)
		runtime.KeepAlive(events)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

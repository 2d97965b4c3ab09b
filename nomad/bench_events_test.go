package nomad

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/nomad/stream"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkEventStreamWhilePlacing measures events per second delivered
// to benchEventSubscribers subscribers, each encoding every frame to JSON
// as the HTTP stream does, while a job of benchEventAllocs allocations is
// registered, scheduled and planned on benchEventNodes nodes. One
// iteration is one such job; the clock runs from the registration until
// every subscriber has received every placement. It reports events/s
// (all subscribers together) and the placements' wall time.
//
//	go test -run '^$' -bench BenchmarkEventStreamWhilePlacing -benchtime 3x ./nomad/
func BenchmarkEventStreamWhilePlacing(b *testing.B) {
	const (
		benchEventSubscribers = 10
		benchEventAllocs      = 1000
		benchEventNodes       = 20
	)
	s := testServer(b, func(c *Config) {
		c.DevMode, c.DataDir = true, ""
		c.Logger = hclog.NewNullLogger()
		c.MinHeartbeatTTL = time.Hour
		c.EventBufferEvents = 1 << 16
	})
	WaitForLeader(b, 10*time.Second, s)
	for i := range benchEventNodes {
		n := itNode(fmt.Sprintf("bench-node-%02d", i))
		n.NodeResources.Cpu.CpuShares = 1 << 30
		n.NodeResources.Memory.MemoryMB = 1 << 30
		n.NodeResources.Disk.DiskMB = 1 << 30
		var resp structs.NodeUpdateResponse
		if err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: n}, &resp); err != nil {
			b.Fatal(err)
		}
	}

	var wall time.Duration
	var events int64
	b.ResetTimer()
	for it := range b.N {
		jobID := fmt.Sprintf("bench-%d", it)
		start, err := s.State().LatestIndex()
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		counts := make([]int64, benchEventSubscribers)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		for i := range benchEventSubscribers {
			sub, err := s.EventBroker().Subscribe(stream.SubscribeRequest{Index: start + 1, Namespace: stream.AllNamespaces})
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer sub.Close()
				placed := map[string]bool{}
				var buf []byte
				for len(placed) < benchEventAllocs {
					f, err := sub.Next(ctx)
					if err != nil {
						b.Errorf("subscriber %d after %d placements: %v", i, len(placed), err)
						return
					}
					buf = f.AppendJSON(buf[:0])
					counts[i] += int64(len(f.Events))
					for _, e := range f.Events {
						if e.Topic == structs.TopicAllocation && e.Type == structs.TypePlanResult {
							placed[e.Key] = true
						}
					}
				}
			}()
		}
		t0 := time.Now()
		var resp structs.JobRegisterResponse
		if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: itJob(jobID, benchEventAllocs)}, &resp); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		cancel()
		wall += time.Since(t0)
		for _, c := range counts {
			events += c
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/placement-job")
	b.ReportMetric(float64(events)/float64(b.N*benchEventSubscribers), "events/subscriber")
}

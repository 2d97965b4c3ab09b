package network_test

import (
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/network/nettest"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkBridgeSetupTeardown is one alloc's bridge network at a time,
// with a mapped port: the cost of the namespace, the four plugins and
// their iptables rules, without other allocs' contention. It reports
// p50 and p99 of setup and of teardown alongside ns/op (both together).
func BenchmarkBridgeSetupTeardown(b *testing.B) {
	m := nettest.NewManager(b, "drovt-bench", "10.251.22.0/24")
	port := nettest.FreePort(b)
	var setup, teardown []time.Duration
	for b.Loop() {
		id := structs.GenerateUUID()
		t0 := time.Now()
		if _, err := m.Setup(bg(), network.Request{AllocID: id, Mode: network.ModeBridge,
			Ports: []structs.AllocatedPortMapping{{Label: "http", Value: port, To: 8080}}}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := m.Teardown(bg(), id); err != nil {
			b.Fatal(err)
		}
		setup, teardown = append(setup, t1.Sub(t0)), append(teardown, time.Since(t1))
	}
	slices.Sort(setup)
	slices.Sort(teardown)
	at := func(ds []time.Duration, p int) float64 { return float64(ds[(len(ds)-1)*p/100].Microseconds()) / 1000 }
	b.ReportMetric(at(setup, 50), "setup-p50-ms")
	b.ReportMetric(at(setup, 99), "setup-p99-ms")
	b.ReportMetric(at(teardown, 50), "teardown-p50-ms")
	b.ReportMetric(at(teardown, 99), "teardown-p99-ms")
}

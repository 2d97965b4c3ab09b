package rpcx

import (
	"context"
	"net/rpc"
	"testing"
)

// BenchmarkRPC measures small calls through the pool, one caller at a time
// and from many goroutines, with and without reusing streams, against plain
// net/rpc on one standard connection as a baseline.
func BenchmarkRPC(b *testing.B) {
	ts := startServer(b, "")
	args := &EchoArgs{Msg: "benchmark", Data: make([]byte, 64), N: 1}
	ctx := context.Background()

	for _, bc := range []struct {
		name       string
		maxIdle    int
		concurrent bool
	}{
		{"pool/sequential/fresh-stream", -1, false},
		{"pool/sequential/reused-stream", DefaultMaxIdleStreams, false},
		{"pool/parallel/fresh-stream", -1, true},
		{"pool/parallel/reused-stream", DefaultMaxIdleStreams, true},
		{"pool/parallel/reused-stream-64", 64, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newTestPool(b, PoolConfig{MaxIdleStreams: bc.maxIdle})
			if err := p.RPC(ctx, ts.addr, "Test.Echo", args, &EchoReply{}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if !bc.concurrent {
				for b.Loop() {
					if err := p.RPC(ctx, ts.addr, "Test.Echo", args, &EchoReply{}); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := p.RPC(ctx, ts.addr, "Test.Echo", args, &EchoReply{}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}

	for _, concurrent := range []bool{false, true} {
		name := "net-rpc-standard/sequential"
		if concurrent {
			name = "net-rpc-standard/parallel"
		}
		b.Run(name, func(b *testing.B) {
			conn, err := Dial(ts.addr, RPCStandard)
			if err != nil {
				b.Fatal(err)
			}
			c := rpc.NewClientWithCodec(NewClientCodec(conn, 0))
			defer c.Close()
			b.ReportAllocs()
			b.ResetTimer()
			if !concurrent {
				for b.Loop() {
					if err := c.Call("Test.Echo", args, &EchoReply{}); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := c.Call("Test.Echo", args, &EchoReply{}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

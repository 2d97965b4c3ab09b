package rpcx

import (
	"context"
	"crypto/tls"
	"net/rpc"
	"testing"

	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
)

// BenchmarkRPC measures small calls through the pool, one caller at a time
// and from many goroutines, with and without reusing streams, against plain
// net/rpc on one standard connection as a baseline. The pool-tls cases run
// the same calls over mutual TLS (ECDSA P-256, TLS 1.3), to show what TLS
// costs a call once the session is up.
func BenchmarkRPC(b *testing.B) {
	ts := startServer(b, "")
	ca := tlstest.NewCA(b)
	tlsServer := ca.Manager(b, tlstest.Server, "global", nil)
	tlsClient := ca.Manager(b, tlstest.Client, "global", nil).OutgoingRPC()
	tts := startServer(b, "", WithTLS(tlsServer.IncomingRPC()))
	args := &EchoArgs{Msg: "benchmark", Data: make([]byte, 64), N: 1}
	ctx := context.Background()

	for _, bc := range []struct {
		name       string
		maxIdle    int
		concurrent bool
		tls        bool
	}{
		{"pool/sequential/fresh-stream", -1, false, false},
		{"pool/sequential/reused-stream", DefaultMaxIdleStreams, false, false},
		{"pool/parallel/fresh-stream", -1, true, false},
		{"pool/parallel/reused-stream", DefaultMaxIdleStreams, true, false},
		{"pool/parallel/reused-stream-64", 64, true, false},
		{"pool-tls/sequential/reused-stream", DefaultMaxIdleStreams, false, true},
		{"pool-tls/parallel/reused-stream", DefaultMaxIdleStreams, true, true},
		{"pool-tls/parallel/reused-stream-64", 64, true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg, ts := PoolConfig{MaxIdleStreams: bc.maxIdle}, ts
			if bc.tls {
				cfg.TLS, ts = tlsClient, tts
			}
			p := newTestPool(b, cfg)
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

	// A new connection per call: what a handshake costs, with and
	// without TLS (the pool pays it once per server).
	for _, bc := range []struct {
		name string
		cfg  *tls.Config
		addr string
	}{{"connect/plaintext", nil, ts.addr}, {"connect/tls", tlsClient, tts.addr}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				conn, err := dialType(bc.addr, RPCStandard, DefaultDialTimeout, bc.cfg)
				if err != nil {
					b.Fatal(err)
				}
				c := rpc.NewClientWithCodec(NewClientCodec(conn, 0))
				if err := c.Call("Test.Echo", args, &EchoReply{}); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "conns/s")
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

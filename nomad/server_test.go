package nomad

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// kvWrite writes key through s and returns the write's index. A write
// that fails because leadership moved is sent again
// (writeThroughElections): the write is idempotent, and only a write that
// returned success counts as acknowledged.
func kvWrite(t *testing.T, s *Server, key, value string) uint64 {
	t.Helper()
	var resp structs.GenericResponse
	writeThroughElections(t, s, "KV.Write", &structs.GenericWriteRequest{Key: key, Value: value}, &resp)
	return resp.Index
}

// kvStale reads a key from one server's own copy.
func kvStale(s *Server, key string) (string, bool) {
	v, ok, err := s.State().KVGet(nil, key)
	if err != nil {
		return "", false
	}
	return v, ok
}

func TestSingleServerElectsItselfAndKeepsDataAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s1 := testServer(t, func(c *Config) { c.DataDir = dir })
	WaitForLeader(t, 5*time.Second, s1)
	for i := 0; i < 20; i++ {
		kvWrite(t, s1, fmt.Sprintf("k%d", i), fmt.Sprint(i))
	}
	id, addr := s1.NodeID(), s1.RPCAddr()
	if err := s1.Shutdown(); err != nil {
		t.Fatal(err)
	}

	s2 := testServer(t, func(c *Config) { c.DataDir = dir; c.RPCAddr = addr })
	if s2.NodeID() != id {
		t.Fatalf("a restarted server must keep its ID: %s != %s", s2.NodeID(), id)
	}
	WaitForLeader(t, 5*time.Second, s2)
	for i := 0; i < 20; i++ {
		if v, ok := kvStale(s2, fmt.Sprintf("k%d", i)); !ok || v != fmt.Sprint(i) {
			t.Fatalf("key k%d lost across restart (got %q, %v)", i, v, ok)
		}
	}
	kvWrite(t, s2, "after", "restart")
}

// startCluster starts n servers that find each other by join addresses and
// bootstrap once all n are known.
func startCluster(t *testing.T, n int) []*Server {
	t.Helper()
	var servers []*Server
	for i := 0; i < n; i++ {
		i := i
		servers = append(servers, testServer(t, func(c *Config) {
			c.BootstrapExpect = n
			c.NodeName = fmt.Sprintf("%s-s%d", t.Name(), i)
		}))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	return servers
}

func TestThreeServerClusterFailover(t *testing.T) {
	t.Parallel()
	servers := startCluster(t, 3)
	leader := WaitForLeader(t, 10*time.Second, servers...)

	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}
	// A write sent to a follower is forwarded to the leader and replicated.
	acked := map[string]string{}
	for i := 0; i < 10; i++ {
		k := fmt.Sprintf("before-%d", i)
		kvWrite(t, follower, k, k)
		acked[k] = k
	}
	for _, s := range servers {
		s := s
		WaitFor(t, 5*time.Second, func() (bool, string) {
			for k := range acked {
				if _, ok := kvStale(s, k); !ok {
					return false, fmt.Sprintf("%s has not got %s", s.config.NodeName, k)
				}
			}
			return true, ""
		})
	}
	var peers []string
	if err := follower.RPC("Status.Peers", &structs.GenericRequest{}, &peers); err != nil || len(peers) != 3 {
		t.Fatalf("want 3 raft peers, got %v (%v)", peers, err)
	}

	// Kill the leader: the other two elect a new one and keep every
	// acknowledged write.
	oldAddr, oldDir := leader.RPCAddr(), leader.config.DataDir
	oldName := leader.config.NodeName
	killed := time.Now()
	leader.Shutdown()
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	newLeader := WaitForLeader(t, 10*time.Second, rest...)
	failover := time.Since(killed)
	t.Logf("leader failover took %s", failover)
	if failover > 5*time.Second {
		t.Fatalf("failover took %s, want under 5s", failover)
	}
	for k, v := range acked {
		if got, ok := kvStale(newLeader, k); !ok || got != v {
			t.Fatalf("acknowledged write %s lost after failover", k)
		}
	}
	for i := 0; i < 10; i++ {
		k := fmt.Sprintf("after-%d", i)
		kvWrite(t, rest[0], k, k)
		acked[k] = k
	}

	// Restart the old leader from its data dir: it rejoins and catches up.
	back := testServer(t, func(c *Config) {
		c.DataDir, c.RPCAddr, c.NodeName, c.BootstrapExpect = oldDir, oldAddr, oldName, 3
	})
	WaitFor(t, 10*time.Second, func() (bool, string) {
		for k := range acked {
			if _, ok := kvStale(back, k); !ok {
				return false, "restarted server is missing " + k
			}
		}
		return true, ""
	})
	WaitForLeader(t, 10*time.Second, append(rest, back)...)
}

func TestServerSurvivesGarbageAndUnknownMethods(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	for _, payload := range [][]byte{{0xff, 0x00, 0x13}, {0x01, 0xc1, 0xc1, 0xc1}, {0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0x01, 0x93, 0xdd, 0xff, 0xff, 0xff, 0xff}} {
		conn, err := net.Dial("tcp", s.RPCAddr())
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(payload)
		conn.Close()
	}
	var reply struct{}
	err := s.RPC("Nope.Nothing", &structs.GenericRequest{}, &reply)
	if err == nil {
		t.Fatal("an unknown method must return an error")
	}
	if err := s.RPC("Status.Ping", &structs.GenericRequest{}, &reply); err != nil {
		t.Fatalf("the server must keep answering after bad input: %v", err)
	}
	if _, err := s.raftApplyFuture(structs.GenericWriteRequestType, &structs.GenericWriteRequest{Key: "ok"}); err != nil {
		t.Fatal(err)
	}
}

func TestKVWriteRejectsAnEmptyKeyAndChangesNothing(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	before, _ := s.State().LatestIndex()
	var resp structs.GenericResponse
	err := s.RPC("KV.Write", &structs.GenericWriteRequest{Key: ""}, &resp)
	if err == nil {
		t.Fatal("an empty key must be refused")
	}
	if after, _ := s.State().LatestIndex(); after != before {
		t.Fatalf("a refused write changed the state index %d -> %d", before, after)
	}
}

// BenchmarkRaftWrite measures committed writes per second through raft
// with raft-boltdb on disk, one writer at a time and many in parallel.
func BenchmarkRaftWrite(b *testing.B) {
	s := testServer(b, nil)
	WaitForLeader(b, 5*time.Second, s)
	b.Run("sequential", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, err := s.raftApply(structs.GenericWriteRequestType, &structs.GenericWriteRequest{Key: fmt.Sprint(i), Value: "v"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				i++
				if _, _, err := s.raftApply(structs.GenericWriteRequestType, &structs.GenericWriteRequest{Key: fmt.Sprint(i), Value: "v"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	b.Run("rpc", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var resp structs.GenericResponse
			if err := s.RPC("KV.Write", &structs.GenericWriteRequest{Key: fmt.Sprint(i), Value: "v"}, &resp); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
}

func TestServerAnswersPeersWhileRaftStartsUp(t *testing.T) {
	// A joining server may call us as soon as the port accepts; every
	// endpoint that reads raft must cope, not crash.
	s := testServer(t, func(c *Config) { c.BootstrapExpect = 3 })
	var m ServerMember
	if err := s.RPC("Status.Member", &structs.GenericRequest{}, &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != s.NodeID() || m.HasState {
		t.Fatalf("an unbootstrapped server must describe itself without state: %+v", m)
	}
	var peers []string
	if err := s.RPC("Status.Peers", &structs.GenericRequest{}, &peers); err != nil {
		t.Fatal(err)
	}
}

func TestDevModeServerElectsItselfQuickly(t *testing.T) {
	start := time.Now()
	s := testServer(t, func(c *Config) { c.DevMode, c.DataDir, c.RaftConfig = true, "", nil })
	WaitForLeader(t, 5*time.Second, s)
	t.Logf("dev server led after %s", time.Since(start))
	kvWrite(t, s, "dev", "ok")
}

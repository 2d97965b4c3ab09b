package nomad

import (
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// forgeStream dials a server's RPC port with the raft connection type, as
// any process that reaches a server without TLS can.
type forgeStream struct{}

func (forgeStream) Dial(a raft.ServerAddress, _ time.Duration) (net.Conn, error) {
	return rpcx.Dial(string(a), rpcx.RPCRaft)
}
func (forgeStream) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (forgeStream) Close() error              { return nil }
func (forgeStream) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// Found from outside, on a server without TLS: one AppendEntries over the
// RPC port's raft connection, claiming a later term, with a
// LogConfiguration entry whose data is not a configuration, panicked raft
// (hashicorp/raft's DecodeConfiguration) and killed the server; the entry
// was stored first, so raft panicked again on every start. So did an
// entry placed far past the log's end (raft stored it with a gap and
// panicked applying the missing entries, then on every start). The FSM's
// guard never saw either. Entries no raft leader sends are refused before
// raft reads them, and the server carries on and starts again.
func TestForgedRaftEntriesCannotCrashAServerOrItsRestart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, itJob("web", 1))
	last := s.raft.LastIndex()

	tr := raft.NewNetworkTransport(forgeStream{}, 1, 5*time.Second, nil)
	defer tr.Close()
	header := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("forger"), Addr: []byte("127.0.0.1:1")}
	cases := []struct {
		name    string
		prev    uint64
		entries []*raft.Log
		want    string
	}{
		{"a configuration that does not decode", 0,
			[]*raft.Log{{Index: 1, Term: 1000, Type: raft.LogConfiguration, Data: []byte{0xc1}}}, "configuration"},
		{"a configuration after the log's end", last,
			[]*raft.Log{{Index: last + 1, Term: 1000, Type: raft.LogConfiguration, Data: []byte("not msgpack")}}, "configuration"},
		{"a peer change of raft's old protocol", last,
			[]*raft.Log{{Index: last + 1, Term: 1000, Type: raft.LogAddPeerDeprecated, Data: []byte{0xc1}}}, "protocol"},
		{"an entry far past the log's end", 0,
			[]*raft.Log{{Index: last + 100_000, Term: 1000, Type: raft.LogCommand, Data: []byte{0x80}}}, "index"},
		{"entries with a gap between them", last,
			[]*raft.Log{{Index: last + 1, Term: 1000, Type: raft.LogNoop}, {Index: last + 3, Term: 1000, Type: raft.LogNoop}}, "index"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp raft.AppendEntriesResponse
			err := tr.AppendEntries("x", raft.ServerAddress(s.RPCAddr()), &raft.AppendEntriesRequest{
				RPCHeader: header, Term: 1000, PrevLogEntry: c.prev, PrevLogTerm: 0,
				Entries: c.entries, LeaderCommitIndex: c.entries[len(c.entries)-1].Index,
			}, &resp)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%+v), want a refusal mentioning %q", err, resp, c.want)
			}
		})
	}
	var snapResp raft.InstallSnapshotResponse
	err = tr.InstallSnapshot("x", raft.ServerAddress(s.RPCAddr()), &raft.InstallSnapshotRequest{
		RPCHeader: header, SnapshotVersion: 1, Term: 1000, LastLogIndex: last + 10, LastLogTerm: 1000,
		Configuration: []byte{0xc1}, ConfigurationIndex: last + 10, Size: 1,
	}, &snapResp, strings.NewReader("x"))
	if err == nil || !strings.Contains(err.Error(), "configuration") {
		t.Fatalf("a snapshot with a configuration that does not decode: got %v, want a refusal", err)
	}

	// Nothing reached raft: its term and its last entry's term are its
	// own (the server's own work may have added entries meanwhile), no
	// entry lies far past the end, and the server is still the leader.
	stats := s.raft.Stats()
	if stats["term"] == "1000" || stats["last_log_term"] == "1000" || s.raft.LastIndex() > last+1000 {
		t.Fatalf("a forged request reached raft: %v", stats)
	}
	if s.raft.State() != raft.Leader {
		t.Fatalf("the server is %s after the forged requests, want leader", s.raft.State())
	}
	registerJob(t, s, itJob("after", 1))
	s.Shutdown()

	cfg2 := testConfig(t)
	cfg2.DataDir, cfg2.NodeID = cfg.DataDir, cfg.NodeID
	s2, err := NewServer(cfg2)
	if err != nil {
		t.Fatalf("the server does not start again: %v", err)
	}
	defer s2.Shutdown()
	WaitForLeader(t, 5*time.Second, s2)
	for _, id := range []string{"web", "after"} {
		if j, _ := s2.State().JobByID(nil, structs.DefaultNamespace, id); j == nil {
			t.Fatalf("job %s is gone after the restart", id)
		}
	}
}

// What a real leader sends still passes: a server that joins after the
// leader compacted its log catches up from an installed snapshot, then
// from appended entries.
func TestAJoiningServerCatchesUpFromASnapshotThroughTheCheckedTransport(t *testing.T) {
	t.Parallel()
	small := func(c *Config) {
		c.RaftConfig.TrailingLogs = 2
		c.RaftConfig.SnapshotThreshold = 1 << 30 // only the snapshots the test takes
	}
	s1 := testServer(t, func(c *Config) { c.NodeName = "s1"; small(c) })
	WaitForLeader(t, 10*time.Second, s1)
	for i := range 10 {
		kvWrite(t, s1, fmt.Sprintf("k%d", i), "v")
	}
	if err := s1.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if s1.raft.Stats()["last_snapshot_index"] == "0" {
		t.Fatalf("no snapshot taken: %v", s1.raft.Stats())
	}
	s2 := waiting(t, "s2", small)
	if n, err := s1.JoinNow([]string{s2.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("joining s2: joined %d, err %v", n, err)
	}
	kvWrite(t, s1, "after", "yes")
	WaitFor(t, 10*time.Second, func() (bool, string) {
		_, early := kvStale(s2, "k0")
		v, late := kvStale(s2, "after")
		return early && late && v == "yes", fmt.Sprintf("s2 has not caught up: %v", s2.raft.Stats())
	})
	if s2.raft.Stats()["last_snapshot_index"] == "0" {
		t.Fatalf("s2 caught up without installing a snapshot; the test no longer covers one: %v", s2.raft.Stats())
	}
}

// A raft log that already holds such an entry (written before the
// transport refused them) stops the server at start with an error naming
// the file and the entry, rather than a panic inside raft.
func TestAPoisonedRaftLogStopsTheServerNamingTheEntry(t *testing.T) {
	t.Parallel()
	storeLog := func(entry func(last uint64) *raft.Log) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			store, err := raftboltdb.New(raftboltdb.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			last, err := store.LastIndex()
			if err != nil {
				t.Fatal(err)
			}
			if err := store.StoreLog(entry(last)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name   string
		poison func(t *testing.T, path string)
		want   string
	}{
		{"a configuration that does not decode", storeLog(func(last uint64) *raft.Log {
			return &raft.Log{Index: last + 1, Term: 1000, Type: raft.LogConfiguration, Data: []byte{0xc1}}
		}), "configuration"},
		{"a gap before the last entry", storeLog(func(last uint64) *raft.Log {
			return &raft.Log{Index: last + 5, Term: 1000, Type: raft.LogNoop}
		}), "missing"},
		{"an entry whose bytes do not decode", func(t *testing.T, path string) {
			db, err := bbolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Update(func(tx *bbolt.Tx) error {
				logs := tx.Bucket([]byte("logs"))
				k, _ := logs.Cursor().Last()
				next := make([]byte, 8)
				binary.BigEndian.PutUint64(next, binary.BigEndian.Uint64(k)+1)
				return logs.Put(next, []byte{0xc1, 0xc1})
			})
			if err != nil {
				t.Fatal(err)
			}
		}, "cannot be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			s, err := NewServer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			WaitForLeader(t, 5*time.Second, s)
			registerJob(t, s, itJob("web", 1))
			s.Shutdown()

			path := filepath.Join(cfg.DataDir, "raft", "raft.db")
			c.poison(t, path)

			cfg2 := testConfig(t)
			cfg2.DataDir, cfg2.NodeID = cfg.DataDir, cfg.NodeID
			s2, err := NewServer(cfg2)
			if err == nil {
				s2.Shutdown()
				t.Fatal("a server must not start from a poisoned raft log")
			}
			for _, want := range []string{path, c.want, "Move the server's raft directory aside"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q should mention %q", err, want)
				}
			}
		})
	}
}

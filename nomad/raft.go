package nomad

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/drover-sched/drover/helper/boltcheck"
	"github.com/drover-sched/drover/helper/dirperm"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/structs"
)

const (
	raftApplyTimeout     = 30 * time.Second
	raftRetainSnapshots  = 2
	raftTransportPool    = 3
	raftTransportTimeout = 10 * time.Second
)

// setupRaft creates raft over the shared RPC port. Stores are raft-boltdb
// (log and stable) and file snapshots under data_dir/raft, or memory in dev
// mode. A single server with bootstrap_expect = 1 bootstraps itself;
// clusters bootstrap in the join loop once enough servers are known.
func (s *Server) setupRaft() error {
	conf := raft.DefaultConfig()
	if s.config.RaftConfig != nil {
		c := *s.config.RaftConfig
		conf = &c
	}
	if s.config.DevMode && s.config.RaftConfig == nil {
		// A lone in-memory dev server has no peers to wait for: elect at
		// once instead of after raft's production heartbeat timeout.
		conf.HeartbeatTimeout = 100 * time.Millisecond
		conf.ElectionTimeout = 100 * time.Millisecond
		conf.LeaderLeaseTimeout = 50 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
	}
	scaleRaftTimings(conf, s.config.RaftMultiplier)
	conf.LocalID = raft.ServerID(s.config.NodeID)
	conf.Logger = s.logger.Named("raft")
	if s.config.RaftSnapshotThreshold > 0 {
		conf.SnapshotThreshold = s.config.RaftSnapshotThreshold
	}
	s.raftTransport = newVettedTransport(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  s.raftLayer,
		MaxPool: raftTransportPool,
		Timeout: raftTransportTimeout,
		Logger:  s.logger.Named("raft-net"),
	}), s.logger.Named("raft-net"))

	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	if s.config.DevMode {
		store := raft.NewInmemStore()
		logs, stable, snaps = store, store, raft.NewInmemSnapshotStore()
	} else {
		dir := filepath.Join(s.config.DataDir, "raft")
		// raft.db holds the cluster's secrets (ACL tokens, the keyring):
		// only the agent may enter, whatever mode the dir had before.
		if err := dirperm.Ensure(s.config.DataDir, dirperm.Private); err != nil {
			return fmt.Errorf("server: data_dir: %w", err)
		}
		if err := dirperm.Ensure(dir, dirperm.Private); err != nil {
			return fmt.Errorf("raft: %w", err)
		}
		path := filepath.Join(dir, "raft.db")
		if err := boltcheck.Check(path); err != nil {
			return corruptRaftDB(path, err)
		}
		var bolt *raftboltdb.BoltStore
		err := boltcheck.Guard(path, func() (err error) {
			bolt, err = raftboltdb.New(raftboltdb.Options{Path: path})
			return err
		})
		if err != nil {
			if errors.Is(err, boltcheck.ErrCorrupt) {
				return corruptRaftDB(path, err)
			}
			return fmt.Errorf("raft: opening log store %s: %w", path, err)
		}
		s.raftClosers = append(s.raftClosers, bolt.Close)
		cache, err := raft.NewLogCache(512, bolt)
		if err != nil {
			return err
		}
		logs, stable = cache, bolt
		fss, err := raft.NewFileSnapshotStoreWithLogger(dir, raftRetainSnapshots, s.logger.Named("snapshot"))
		if err != nil {
			return fmt.Errorf("raft: snapshot store: %w", err)
		}
		snaps = fss
		if err := checkRaftLog(logs, snaps); err != nil {
			return poisonedRaftDB(path, err)
		}
	}

	hasState, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return err
	}
	r, err := raft.NewRaft(conf, s.fsm, logs, stable, snaps, s.raftTransport)
	if err != nil {
		return fmt.Errorf("raft: %w", err)
	}
	s.raft = r
	s.watchLeader(r)
	if !hasState && s.config.BootstrapExpect == 1 && len(s.config.ServerJoin) == 0 {
		cfg := raft.Configuration{Servers: []raft.Server{{
			ID: conf.LocalID, Address: raft.ServerAddress(s.advertise), Suffrage: raft.Voter,
		}}}
		if err := r.BootstrapCluster(cfg).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return fmt.Errorf("raft: bootstrap: %w", err)
		}
	}
	return nil
}

// raftApply commits one entry through raft and returns its index and the
// FSM's response. An error the FSM returned is returned as the error.
func (s *Server) raftApply(t structs.MessageType, msg any) (uint64, any, error) {
	f, err := s.raftApplyFuture(t, msg)
	if err != nil {
		return 0, nil, err
	}
	if err := f.Error(); err != nil {
		return 0, nil, notLeader(err)
	}
	resp := f.Response()
	if rerr, ok := resp.(error); ok && rerr != nil {
		return f.Index(), nil, rerr
	}
	return f.Index(), resp, nil
}

// raftApplyFuture submits an entry without waiting, for pipelining.
func (s *Server) raftApplyFuture(t structs.MessageType, msg any) (raft.ApplyFuture, error) {
	buf, err := raftlog.Encode(t, msg)
	if err != nil {
		return nil, err
	}
	if err := checkEntrySize(t, len(buf)); err != nil {
		return nil, err
	}
	return stoppableFuture{ApplyFuture: s.raft.Apply(buf, raftApplyTimeout), stopped: s.raftStopped}, nil
}

// notLeader marks raft's refusals for want of leadership (raft.ErrNotLeader,
// raft.ErrLeadershipLost) as structs.ErrNotLeader, which keeps its identity
// across RPC where raft's own errors arrive as text; the raft error stays in
// the chain. Other errors pass unchanged.
func notLeader(err error) error {
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
		return fmt.Errorf("%w: %w", structs.ErrNotLeader, err)
	}
	return err
}

// fsmErrorFuture reports the FSM's response error as the future's error.
type fsmErrorFuture struct{ raft.ApplyFuture }

func (f fsmErrorFuture) Error() error {
	if err := f.ApplyFuture.Error(); err != nil {
		return err
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// raftConfiguration returns the current raft configuration.
func (s *Server) raftConfiguration() (raft.Configuration, uint64, error) {
	if s.raft == nil {
		return raft.Configuration{}, 0, structs.ErrNoLeader
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Configuration{}, 0, err
	}
	return f.Configuration(), f.Index(), nil
}

// checkEntrySize refuses an entry over raftlog.MaxEntrySize as a request
// too large (HTTP 413), before raft has it.
func checkEntrySize(t structs.MessageType, n int) error {
	if err := raftlog.CheckSize(t, n); err != nil {
		return errTooLarge("%v", err)
	}
	return nil
}

// corruptRaftDB says what to do about an unreadable raft log store.
func corruptRaftDB(path string, err error) error {
	return fmt.Errorf("raft: the log store %s cannot be read (%v); this server cannot start from it. "+
		"Move the server's raft directory aside and start the server again to rejoin the cluster and catch up from its peers, "+
		"or, for a single server, restore the data dir from a backup", path, err)
}

// MaxRaftMultiplier bounds raft_multiplier: at 10 a lost leader is noticed
// after ~10 s, as in Nomad; beyond that a cluster would stay leaderless for
// longer than clients keep waiting.
const MaxRaftMultiplier = 10

// scaleRaftTimings multiplies the timeouts that decide when a follower
// gives up on its leader and when a leader steps down for lack of
// contact. A server starved of CPU (a small or oversubscribed machine)
// answers heartbeats late; with raft's defaults (1 s heartbeat and
// election timeouts, a 500 ms leader lease) it then loses leadership
// over and over, and every new leader starts its nodes' failover window
// again. The other timings (commit, snapshots) do not decide leadership
// and are left alone.
func scaleRaftTimings(conf *raft.Config, mult int) {
	if mult <= 1 {
		return
	}
	m := time.Duration(min(mult, MaxRaftMultiplier))
	conf.HeartbeatTimeout *= m
	conf.ElectionTimeout *= m
	conf.LeaderLeaseTimeout *= m
}

package nomad

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/structs"
)

// ServerMember describes a server to a peer that is joining: its raft ID and
// address, whether it already belongs to a raft cluster, and the leader it
// knows.
type ServerMember struct {
	ID       string
	Addr     string
	Name     string
	Region   string
	HasState bool
	Leader   string
}

var joinMu sync.Mutex

// Join adds RPC addresses of other servers to contact.
func (s *Server) Join(addrs ...string) {
	joinMu.Lock()
	defer joinMu.Unlock()
	s.config.ServerJoin = append(s.config.ServerJoin, addrs...)
}

func (s *Server) joinAddrs() []string {
	joinMu.Lock()
	defer joinMu.Unlock()
	return append([]string(nil), s.config.ServerJoin...)
}

// startJoinLoop runs joinLoop unless one runs already or the server is
// shutting down. A server started with join addresses or
// bootstrap_expect runs one from the start; JoinNow starts one for a
// server that had neither, so the addresses it was given are retried
// until it is in a cluster.
func (s *Server) startJoinLoop() {
	s.joinLoopMu.Lock()
	defer s.joinLoopMu.Unlock()
	if s.joinLoopRunning || s.ctx.Err() != nil {
		return
	}
	s.joinLoopRunning = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.joinLoop()
		s.joinLoopMu.Lock()
		s.joinLoopRunning = false
		s.joinLoopMu.Unlock()
	}()
}

// joinLoop forms or joins a cluster. Without existing raft state it asks the
// servers it was told about who they are. If one of them knows a leader,
// this server asks that leader to add it as a voter. If none does and at
// least bootstrap_expect servers without state are known (counting this
// one), every one of them bootstraps raft with the same configuration — the
// set of those servers sorted by ID — so they agree on the first leader
// election. It stops once this server is part of a cluster with a leader.
func (s *Server) joinLoop() {
	interval := s.config.RetryJoinInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		done, err := s.tryJoin()
		if err != nil {
			s.logger.Debug("join attempt failed", "error", err)
		}
		if done {
			return
		}
		t.Reset(interval)
	}
}

func (s *Server) tryJoin() (bool, error) {
	if s.inCluster() {
		return true, nil
	}
	self := s.member()
	members := []ServerMember{self}
	var lastErr error
	for _, addr := range s.joinAddrs() {
		if addr == s.advertise {
			continue
		}
		var m ServerMember
		if err := s.forwardTo(addr, "Status.Member", &structs.GenericRequest{}, &m); err != nil {
			lastErr = err
			continue
		}
		if m.ID == self.ID {
			continue
		}
		if m.Leader != "" {
			req := &structs.RaftPeerAddRequest{ID: self.ID, Address: self.Addr}
			var resp structs.GenericResponse
			if err := s.forwardTo(m.Leader, "Operator.RaftAddPeer", req, &resp); err != nil {
				return false, err
			}
			s.logger.Info("asked the leader to add this server", "leader", m.Leader)
			return false, nil
		}
		if !m.HasState {
			members = append(members, m)
		}
	}
	expect := s.config.BootstrapExpect
	if expect <= 1 || len(members) < expect || self.HasState {
		return false, lastErr
	}
	sort.Slice(members, func(i, j int) bool { return members[i].ID < members[j].ID })
	cfg := raft.Configuration{}
	for _, m := range members[:expect] {
		cfg.Servers = append(cfg.Servers, raft.Server{ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.Addr), Suffrage: raft.Voter})
	}
	if !containsServer(cfg, self.ID) {
		return false, nil
	}
	err := s.raft.BootstrapCluster(cfg).Error()
	if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return false, err
	}
	s.logger.Info("bootstrapped raft cluster", "servers", len(cfg.Servers))
	return false, nil
}

func containsServer(cfg raft.Configuration, id string) bool {
	for _, srv := range cfg.Servers {
		if string(srv.ID) == id {
			return true
		}
	}
	return false
}

// inCluster reports whether this server is in a raft configuration that has
// a leader.
func (s *Server) inCluster() bool {
	cfg, _, err := s.raftConfiguration()
	if err != nil || len(cfg.Servers) == 0 || !containsServer(cfg, s.config.NodeID) {
		return false
	}
	addr, _ := s.Leader()
	return addr != ""
}

func (s *Server) member() ServerMember {
	cfg, _, err := s.raftConfiguration()
	leader, _ := s.Leader()
	return ServerMember{
		ID: s.config.NodeID, Addr: s.advertise, Name: s.config.NodeName, Region: s.config.Region,
		HasState: err == nil && len(cfg.Servers) > 0, Leader: leader,
	}
}

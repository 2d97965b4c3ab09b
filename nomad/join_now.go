package nomad

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/structs"
)

// JoinNow is `server join`: an operator names other servers and this one
// brings them together at once instead of waiting for retry_join.
//
// Every address is asked who it is (Status.Member). When this server is
// already in a cluster, a server that has no raft state yet is added to
// it through the leader; one that already belongs to this cluster counts
// as joined; one that belongs to another cluster is refused, since merging
// two raft histories would lose one of them. When this server is not in a
// cluster yet, the addresses that answered and were accepted join its
// retry list and one join attempt runs now: a contacted server that knows a
// leader adds this one. If none knows a leader yet (the cluster is
// electing, or has lost its quorum), the join loop keeps trying the list
// until this server is in a cluster; it is started here if the server
// runs none (it was started with no join addresses). A refused address
// (another region's server) is kept out of the list, since a join attempt
// asks any leader it finds there to take this server in.
//
// It returns how many addresses answered and were joined, and the errors
// of the others. An attempt that failed only because leadership moved
// while it ran is no error: the join loop tries again.
func (s *Server) JoinNow(addrs []string) (int, error) {
	if len(addrs) == 0 {
		return 0, errBadRequest("no address to join: give at least one server RPC address (host:port)")
	}
	inCluster := s.inCluster()
	self := s.member()
	joined := 0
	var accepted []string
	var errs []error
	for _, addr := range addrs {
		var m ServerMember
		if err := s.forwardTo(addr, "Status.Member", &structs.GenericRequest{}, &m); err != nil {
			errs = append(errs, fmt.Errorf("contacting %s: %w", addr, err))
			continue
		}
		if err := s.joinMember(self, inCluster, addr, m); err != nil {
			errs = append(errs, err)
			continue
		}
		joined++
		accepted = append(accepted, addr)
	}
	if !inCluster && joined > 0 {
		s.Join(accepted...)
		if _, err := s.tryJoin(); err != nil {
			if !duringElection(err) {
				errs = append(errs, err)
			} else {
				s.logger.Info("join attempt met an election; the join loop retries", "error", err)
			}
		}
		s.startJoinLoop()
	}
	return joined, errors.Join(errs...)
}

// joinMember decides what joining the server m (answering at addr) means.
func (s *Server) joinMember(self ServerMember, inCluster bool, addr string, m ServerMember) error {
	switch {
	case m.ID == self.ID:
		return nil
	case m.Region != self.Region:
		return fmt.Errorf("server %s at %s is in region %q, this one in %q: servers join only within their region",
			m.Name, addr, m.Region, self.Region)
	case !inCluster:
		// tryJoin, run once for all addresses, does the work.
		return nil
	case s.isPeer(m.ID):
		return nil
	case m.HasState:
		return fmt.Errorf("server %s at %s already belongs to another cluster (its leader is %q, ours %q); "+
			"wipe its data dir to join it here", m.Name, addr, m.Leader, self.Leader)
	}
	req := &structs.RaftPeerAddRequest{ID: m.ID, Address: m.Addr}
	var resp structs.GenericResponse
	if err := s.RPC("Operator.RaftAddPeer", req, &resp); err != nil {
		return fmt.Errorf("adding server %s at %s: %w", m.Name, addr, err)
	}
	s.logger.Info("joined server to the cluster", "name", m.Name, "id", m.ID, "address", m.Addr)
	return nil
}

// isPeer reports whether id is in this server's raft configuration.
func (s *Server) isPeer(id string) bool {
	cfg, _, err := s.raftConfiguration()
	return err == nil && containsServer(cfg, id)
}

// duringElection reports whether err says only that the cluster had no
// leader, or lost it, while the request ran: trying again later will do.
// Raft's refusals reach here over RPC as structs.ErrNotLeader (see
// notLeader); raft's own errors are matched too for a call this server
// answered itself.
func duringElection(err error) bool {
	return errors.Is(err, structs.ErrNoLeader) || errors.Is(err, structs.ErrNotLeader) ||
		errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrNotLeader)
}

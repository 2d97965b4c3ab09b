package nomad

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/structs"
)

// Operator holds cluster administration endpoints.
type Operator struct {
	srv operatorServer
}

// operatorServer is what Operator uses of the server: besides the shared
// pieces, raft's configuration and membership changes and the eval
// broker's pause of the scheduler configuration.
type operatorServer interface {
	rpcForwarder
	serverPeerChecker
	operatorChecker
	blockingQuerier
	raftApplier
	Leader() (string, string)
	NodeID() string
	Logger() hclog.Logger
	raftConfiguration() (raft.Configuration, uint64, error)
	raftMembership() raftMembership
	syncEvalBrokerPause() error
}

// raftMembership changes the raft configuration (raft.Raft).
type raftMembership interface {
	AddVoter(id raft.ServerID, address raft.ServerAddress, prevIndex uint64, timeout time.Duration) raft.IndexFuture
	RemoveServer(id raft.ServerID, prevIndex uint64, timeout time.Duration) raft.IndexFuture
}

func (s *Server) raftMembership() raftMembership { return s.raft }

var _ operatorServer = (*Server)(nil)

// RaftGetConfiguration lists the raft servers and which one leads
// (operator read).
func (o *Operator) RaftGetConfiguration(args *structs.GenericRequest, reply *structs.RaftConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.RaftGetConfiguration", args, args, reply); done {
		return err
	}
	if err := o.srv.allowOperator(args, false); err != nil {
		return err
	}
	cfg, idx, err := o.srv.raftConfiguration()
	if err != nil {
		return err
	}
	_, leaderID := o.srv.Leader()
	reply.Index = idx
	reply.Servers = nil
	for _, s := range cfg.Servers {
		reply.Servers = append(reply.Servers, &structs.RaftServer{
			ID: string(s.ID), Node: string(s.ID), Address: string(s.Address),
			Leader: string(s.ID) == leaderID, Voter: s.Suffrage == raft.Voter, RaftProtocol: "3",
		})
	}
	return nil
}

// RaftAddPeer adds a server as a voter. Only the leader can; others forward.
// Only a server may call it (see requireServer): joining servers and `server
// join` do.
//
// A server whose data dir was wiped comes back with a new raft ID at its
// old address. Raft refuses two servers at one address, so the old ID at
// that address is removed first (never the leader's own: that would be a
// misconfigured peer claiming the leader's address).
func (o *Operator) RaftAddPeer(args *structs.RaftPeerAddRequest, reply *structs.GenericResponse) error {
	if done, err := serverOnly(o.srv, "Operator.RaftAddPeer", args, reply); done {
		return err
	}
	if args.ID == "" || args.Address == "" {
		return errBadRequest("raft peer needs both ID and Address")
	}
	id, addr := raft.ServerID(args.ID), raft.ServerAddress(args.Address)
	cfg, cfgIndex, err := o.srv.raftConfiguration()
	if err != nil {
		return err
	}
	for _, srv := range cfg.Servers {
		if srv.Address != addr || srv.ID == id {
			continue
		}
		if string(srv.ID) == o.srv.NodeID() {
			return errBadRequest("address %s is this leader's (%s); refusing to add %s there", args.Address, srv.ID, args.ID)
		}
		// prevIndex makes the removal fail if the configuration changed
		// since it was read; the joining server retries.
		f := o.srv.raftMembership().RemoveServer(srv.ID, cfgIndex, 30*time.Second)
		if err := f.Error(); err != nil {
			return fmt.Errorf("removing stale raft peer %s at %s: %w", srv.ID, srv.Address, notLeader(err))
		}
		o.srv.Logger().Info("removed raft peer replaced at the same address", "old_id", srv.ID, "new_id", args.ID, "address", args.Address)
	}
	f := o.srv.raftMembership().AddVoter(id, addr, 0, 30*time.Second)
	if err := f.Error(); err != nil {
		return fmt.Errorf("adding raft peer %s at %s: %w", args.ID, args.Address, notLeader(err))
	}
	reply.Index = f.Index()
	o.srv.Logger().Info("added raft peer", "id", args.ID, "address", args.Address)
	return nil
}

// RaftRemovePeer removes a server from the raft configuration (operator
// write).
func (o *Operator) RaftRemovePeer(args *structs.RaftPeerAddRequest, reply *structs.GenericResponse) error {
	if done, err := o.srv.forward("Operator.RaftRemovePeer", args, args, reply); done {
		return err
	}
	if err := o.srv.allowOperator(args, true); err != nil {
		return err
	}
	f := o.srv.raftMembership().RemoveServer(raft.ServerID(args.ID), 0, 30*time.Second)
	if err := f.Error(); err != nil {
		return notLeader(err)
	}
	reply.Index = f.Index()
	return nil
}

package nomad

import (
	"math/rand"

	"github.com/drover-sched/drover/nomad/heartbeat"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// The server's side of the heartbeater (nomad/heartbeat): it is made once
// for the server's lifetime (setupLeaderComponents), run by the leader for
// each term (leader.go), and reset by every heartbeat and registration
// (Node.UpdateStatus and Node.Register in node_endpoint.go).

// newHeartbeater makes the server's heartbeater, reading the server's
// current state and writing node statuses through raft.
func (s *Server) newHeartbeater() *heartbeat.Heartbeater {
	var writer heartbeat.StatusWriter = s
	if s.opts.wrapNodeStatusWriter != nil {
		writer = s.opts.wrapNodeStatusWriter(writer)
	}
	return heartbeat.New(heartbeat.Config{
		State:                  heartbeatState{s},
		Writer:                 writer,
		MinHeartbeatTTL:        s.config.MinHeartbeatTTL,
		MaxHeartbeatsPerSecond: s.config.MaxHeartbeatsPerSecond,
		HeartbeatGrace:         s.config.HeartbeatGrace,
		FailoverHeartbeatTTL:   s.config.FailoverHeartbeatTTL,
		MaxNodeDownPerSecond:   s.config.MaxNodeDownPerSecond,
		Clock:                  s.clock,
		Logger:                 s.logger.Named("heartbeat"),
		Rand:                   rand.New(rand.NewSource(s.seed)),
		Metrics:                s.metrics,
		InternID:               state.InternString,
	})
}

// heartbeatState is the heartbeater's StateReader: each read goes to the
// server's current state store, which a snapshot restore replaces.
type heartbeatState struct{ s *Server }

func (r heartbeatState) Nodes() ([]*structs.Node, error) {
	it, err := r.s.State().Nodes(nil)
	if err != nil {
		return nil, err
	}
	var nodes []*structs.Node
	for raw := it.Next(); raw != nil; raw = it.Next() {
		nodes = append(nodes, raw.(*structs.Node))
	}
	return nodes, nil
}

func (r heartbeatState) NodeByID(nodeID string) (*structs.Node, error) {
	return r.s.State().NodeByID(nil, nodeID)
}

func (r heartbeatState) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return r.s.State().AllocsByNode(nil, nodeID)
}

// ApplyNodeStatuses commits a batch of node status changes for the
// heartbeater (its StatusWriter), with the nodes the FSM skipped.
func (s *Server) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	_, resp, err := s.raftApply(structs.NodeBatchUpdateStatusRequestType, req)
	if err != nil {
		return nil, err
	}
	if r, ok := resp.(*structs.NodeBatchUpdateStatusResponse); ok {
		return r.Skipped, nil
	}
	return nil, nil
}

package nomad

import (
	"context"

	"github.com/drover-sched/drover/nomad/drainer"
	"github.com/drover-sched/drover/structs"
)

// drainerRaft writes the drainer's entries through this server's raft.
type drainerRaft struct{ s *Server }

func (r drainerRaft) MarkMigrations(req *structs.AllocUpdateDesiredTransitionRequest) (uint64, error) {
	idx, _, err := r.s.raftApply(structs.AllocUpdateDesiredTransitionRequestType, req)
	return idx, err
}

func (r drainerRaft) EndDrain(req *structs.NodeUpdateDrainRequest) (uint64, error) {
	idx, _, err := r.s.raftApply(structs.NodeUpdateDrainRequestType, req)
	return idx, err
}

// runDrainer is the leader's node drainer (nomad/drainer), one goroutine
// started with leadership and stopped with it.
func (s *Server) runDrainer(ctx context.Context) {
	drainer.Run(ctx, drainer.Config{
		Clock:  s.clock,
		Logger: s.logger.Named("drainer"),
		State: func() (drainer.State, <-chan struct{}) {
			st := s.State()
			return st.View(), st.AbandonCh()
		},
		Raft:  drainerRaft{s},
		NewID: structs.GenerateUUID,

		MinPassInterval: s.config.DrainerMinPassInterval,
	})
}

package nomad

import (
	"context"
	"time"

	"github.com/drover-sched/drover/nomad/drainer"
	"github.com/drover-sched/drover/structs"
)

// drainerClock gives the drainer the server's injected clock.
type drainerClock struct{ c Clock }

func (d drainerClock) Now() time.Time { return d.c.Now() }

func (d drainerClock) AfterFuncAt(when time.Time, f func()) drainer.Timer {
	return d.c.AfterFuncAt(when, f)
}

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
		Clock:  drainerClock{s.clock},
		Logger: s.logger.Named("drainer"),
		State:  s.State,
		Raft:   drainerRaft{s},
		NewID:  structs.GenerateUUID,

		MinPassInterval: s.config.DrainerMinPassInterval,
	})
}

package nomad

import (
	"github.com/drover-sched/drover/structs"
)

// System holds cluster-wide maintenance endpoints.
type System struct {
	srv systemServer
}

// systemServer is what System uses of the server.
type systemServer interface {
	rpcForwarder
	managementChecker
	collectGarbage(g gcThresholds) (uint64, error)
}

var _ systemServer = (*Server)(nil)

// GarbageCollect runs a forced garbage collection now: every terminal
// object is collected regardless of age. Like every collection it removes
// only what is terminal (promise 2) and no longer needed: evals that are
// finished and whose allocations are all terminal on both sides (but not
// the completed allocs of a batch job that still runs, nor a failed alloc
// still to be rescheduled), stopped or finished jobs with nothing left
// running, and down nodes with nothing left running. The FSM checks each
// job and node again when it applies the deletion. It needs a management
// token, as in Nomad.
func (s *System) GarbageCollect(args *structs.GenericRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.forward("System.GarbageCollect", args, args, reply); done {
		return err
	}
	if err := s.srv.allowManagement(args); err != nil {
		return err
	}
	idx, err := s.srv.collectGarbage(gcThresholds{force: true})
	if err != nil {
		return err
	}
	reply.Index = idx
	return nil
}

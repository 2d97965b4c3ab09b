package nomad

import (
	"context"

	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/deploymentwatcher"
	"github.com/drover-sched/drover/structs"
)

// deploymentWatcherRaft writes the deployment watcher's entries through
// this server's raft, one entry each; its eval write is the one the other
// leader loops use.
type deploymentWatcherRaft struct {
	s *Server
	broker.EvalWriter
}

func (r deploymentWatcherRaft) ApplyDeploymentStatus(req *structs.DeploymentStatusUpdateRequest) error {
	_, _, err := r.s.raftApply(structs.DeploymentStatusUpdateRequestType, req)
	return err
}

func (r deploymentWatcherRaft) ApplyDeploymentPromotion(req *structs.DeploymentPromoteRequest) error {
	_, _, err := r.s.raftApply(structs.DeploymentPromoteRequestType, req)
	return err
}

// runDeploymentWatcher is the leader's deployment watcher
// (nomad/deploymentwatcher), one goroutine started with leadership and
// stopped with it; each term gets a new watcher, which starts from state.
func (s *Server) runDeploymentWatcher(ctx context.Context) {
	deploymentwatcher.New(deploymentwatcher.Config{
		State:  func() deploymentwatcher.State { return s.State() },
		Raft:   deploymentWatcherRaft{s, s.evalWriter()},
		Clock:  s.clock,
		Logger: s.logger.Named("deployment_watcher"),
	}).Run(ctx)
}

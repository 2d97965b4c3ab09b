package nomad

import (
	"context"

	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/structs"
)

// The server's side of deploymentWatcherDeps: each write is one raft
// entry.

// ApplyDeploymentStatus commits a deployment status change with the job
// and eval that come with it.
func (s *Server) ApplyDeploymentStatus(req *structs.DeploymentStatusUpdateRequest) error {
	_, _, err := s.raftApply(structs.DeploymentStatusUpdateRequestType, req)
	return err
}

// ApplyDeploymentPromotion commits a promotion with its eval.
func (s *Server) ApplyDeploymentPromotion(req *structs.DeploymentPromoteRequest) error {
	_, _, err := s.raftApply(structs.DeploymentPromoteRequestType, req)
	return err
}

// serverDeploymentDeps adapts the server to deploymentWatcherDeps; its
// eval write is the one the other leader loops use.
type serverDeploymentDeps struct {
	*Server
	broker.EvalWriter
}

// runDeploymentWatcher is the leader loop that drives deployments.
func (s *Server) runDeploymentWatcher(ctx context.Context) {
	w := newDeploymentWatcher(serverDeploymentDeps{s, s.evalWriter()}, deploymentWatcherConfig{
		Clock:  s.clock,
		Logger: s.logger.Named("deployment_watcher"),
	})
	w.run(ctx)
}

package nomad

import (
	"errors"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// PeriodicForce launches a child of a periodic job now, outside its
// schedule and regardless of prohibit_overlap (`job periodic force`). It
// runs on the leader, whose dispatcher tracks the job.
func (j *Job) PeriodicForce(args *structs.PeriodicForceRequest, reply *structs.PeriodicForceResponse) error {
	if done, err := j.srv.forward("Job.PeriodicForce", args, args, reply); done {
		return err
	}
	job, err := j.jobToChange(args, args.Namespace, args.JobID, acl.NamespaceCapabilityForcePeriodicJob)
	if err != nil {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	if !job.IsPeriodic() {
		return errBadRequest("job %q is not periodic; only a job with an enabled periodic block can be forced", job.ID)
	}
	if job.Stopped() {
		return errBadRequest("job %q is stopped; run it again before forcing a launch", job.ID)
	}
	eval, err := j.srv.periodicLauncher().ForceRun(ns, job.ID)
	if errors.Is(err, ErrPeriodicNotTracked) {
		return errBadRequest("job %q: %v", job.ID, err)
	}
	if err != nil {
		return err
	}
	reply.EvalID, reply.EvalCreateIndex, reply.Index = eval.ID, eval.CreateIndex, eval.CreateIndex
	return nil
}

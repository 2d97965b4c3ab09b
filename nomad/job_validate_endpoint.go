package nomad

import (
	"errors"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// Validate checks a job as Register would admit it (admitJob), without
// writing anything: an invalid job is answered with its problems, not
// with an error. It needs read-job in the job's namespace, as in Nomad.
func (j *Job) Validate(args *structs.JobValidateRequest, reply *structs.JobValidateResponse) error {
	if done, err := j.srv.forward("Job.Validate", args, args, reply); done {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	if args.Job != nil && args.Job.Namespace != "" {
		ns = args.Job.Namespace
	}
	if _, err := j.srv.allowNamespaceOp(args, ns, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	_, err := j.srv.admitJob(args.Job, ns)
	if err != nil && !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrTooLarge) {
		return err
	}
	*reply = ValidationAnswer(err)
	return nil
}

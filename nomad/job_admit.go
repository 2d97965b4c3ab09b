package nomad

import (
	"errors"

	"github.com/drover-sched/drover/structs"
)

// A submitted job enters the server once. Job.Register, Job.Plan and
// Job.Validate each pass it through admitJob, which is the only place a
// submitted job is canonicalized and validated: the HTTP layer converts
// the wire form and forwards, so a job refused by one of the three is
// refused by all, with the same message.
//
// admitJob checks the job against the server's size limits, then works on
// a copy (the request's job is the caller's): it sets the namespace the
// job goes into, canonicalizes it and validates it, the periodic block
// with the rest. What depends on who asks (ACLs, the host volumes a token
// may mount) and on the state (an index check, a type change) stays with
// the endpoint.
func (s *Server) admitJob(job *structs.Job, ns string) (*structs.Job, error) {
	if job == nil {
		return nil, errBadRequest("job is missing from the request")
	}
	if err := s.jobLimits().check(job); err != nil {
		return nil, err
	}
	return CanonicalJob(job, ns)
}

// CanonicalJob is the part of admitJob that depends on the job alone: a
// copy in namespace ns, canonicalized, and validated (its fields, then its
// periodic block). A problem is an ErrBadRequest that reads "invalid job:
// <problems>". Tests that stand in for a server admit jobs with it.
func CanonicalJob(job *structs.Job, ns string) (*structs.Job, error) {
	out := job.Copy()
	out.Namespace = ns
	out.Canonicalize()
	err := out.Validate()
	if err == nil && out.IsPeriodic() {
		err = ValidatePeriodic(out)
	}
	if err != nil {
		return nil, &invalidJobError{problems: err}
	}
	return out, nil
}

// invalidJobError is a job refused by validation. It reads "invalid job:
// <problems>" wherever it ends up (an RPC caller, the HTTP answer), is an
// ErrBadRequest (the HTTP layer answers 400), and still holds the
// *structs.ValidationError for a caller in the same process.
type invalidJobError struct{ problems error }

func (e *invalidJobError) Error() string   { return "invalid job: " + e.problems.Error() }
func (e *invalidJobError) Unwrap() []error { return []error{ErrBadRequest, e.problems} }

// ValidationAnswer is Nomad's validate answer for an admission's error
// (nil: the job is admitted): not an error of the call but the job's
// problems, one a line, and the whole refusal as register would give it.
func ValidationAnswer(err error) structs.JobValidateResponse {
	out := structs.JobValidateResponse{DriverConfigValidated: true, ValidationErrors: []string{}}
	if err == nil {
		return out
	}
	out.Error = err.Error()
	var ve *structs.ValidationError
	var ij *invalidJobError
	switch {
	case errors.As(err, &ve):
		out.ValidationErrors = append(out.ValidationErrors, ve.Problems...)
	case errors.As(err, &ij):
		out.ValidationErrors = append(out.ValidationErrors, ij.problems.Error())
	default:
		out.ValidationErrors = append(out.ValidationErrors, err.Error())
	}
	return out
}

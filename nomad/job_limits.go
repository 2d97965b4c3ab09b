package nomad

import (
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// MaxJobMaxSourceSize is the largest job_max_source_size a server accepts:
// a quarter of the RPC message limit, so a job always fits one message
// together with what travels with it (its request, its evaluation, a
// dispatch payload, the previous version in a plan's diff).
const MaxJobMaxSourceSize = rpcx.DefaultMaxMessageSize / 4

// jobLimits are the bounds every job-writing endpoint checks before
// anything else, so that a refused job changes nothing and no stored job
// can exhaust the servers that schedule it on every start.
type jobLimits struct {
	maxSourceSize int
	maxCount      int
	maxAllocs     int
}

func (s *Server) jobLimits() jobLimits {
	return jobLimits{maxSourceSize: s.config.JobMaxSourceSize, maxCount: s.config.JobMaxCount, maxAllocs: s.config.JobMaxAllocs}
}

// checkSize refuses a job whose encoded size is over job_max_source_size.
// It encodes the job, which costs what the raft entry will cost anyway.
func (l jobLimits) checkSize(job *structs.Job) error {
	if job == nil || l.maxSourceSize <= 0 {
		return nil
	}
	buf, err := rpcx.Encode(job)
	if err != nil {
		return errBadRequest("job %q cannot be encoded: %v", job.ID, err)
	}
	if len(buf) > l.maxSourceSize {
		return errTooLarge("job %q is %d bytes encoded, over the server's job_max_source_size of %d bytes; make the job smaller (meta, templates and driver config are the usual culprits) or raise server.job_max_source_size",
			job.ID, len(buf), l.maxSourceSize)
	}
	return nil
}

// checkCounts refuses a job one of whose groups asks for more than
// job_max_count allocations, or whose groups together ask for more than
// job_max_allocs.
func (l jobLimits) checkCounts(job *structs.Job) error {
	if job == nil {
		return nil
	}
	total := 0
	for _, tg := range job.TaskGroups {
		if l.maxCount > 0 && tg.Count > l.maxCount {
			return errBadRequest("group %q of job %q has count %d, over the server's job_max_count of %d; lower the count or raise server.job_max_count",
				tg.Name, job.ID, tg.Count, l.maxCount)
		}
		if tg.Count > 0 {
			total += tg.Count
		}
	}
	if l.maxAllocs > 0 && total > l.maxAllocs {
		return errBadRequest("job %q asks for %d allocations in all, over the server's job_max_allocs of %d; lower the group counts or raise server.job_max_allocs",
			job.ID, total, l.maxAllocs)
	}
	return nil
}

// check applies every bound: the size first, as it is the cheapest to
// abuse.
func (l jobLimits) check(job *structs.Job) error {
	if err := l.checkSize(job); err != nil {
		return err
	}
	return l.checkCounts(job)
}

package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// allocJobIndex keys an alloc by its job and, within the job, by its
// deployment: Namespace, JobID and DeploymentID, each ended by a zero
// byte (memdb adds the alloc's ID after them, as for every non-unique
// index). One index answers both reads: a job's allocs are the entries
// under Namespace+JobID, a deployment's those under
// Namespace+JobID+DeploymentID, since a deployment belongs to one job.
//
// The allocs table had a separate deployment index until every alloc
// paid for an entry in each (about 460 bytes of a server's heap per alloc
// and index, BenchmarkAllocIndexHeap). An alloc without a deployment has
// an empty DeploymentID and sorts first among its job's.
//
// Lookups pass the namespace and job ID, and optionally the deployment
// ID. An alloc without a namespace or job is not indexed.
type allocJobIndex struct{}

func (allocJobIndex) FromObject(obj any) (bool, []byte, error) {
	a, ok := obj.(*structs.Allocation)
	if !ok {
		return false, nil, fmt.Errorf("unexpected type %T for the allocs job index", obj)
	}
	if a.Namespace == "" || a.JobID == "" {
		return false, nil, nil
	}
	return true, allocJobKey(a.Namespace, a.JobID, a.DeploymentID, true), nil
}

func (allocJobIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, fmt.Errorf("allocs job index: want namespace, job ID and optionally deployment ID, got %d arguments", len(args))
	}
	s := make([]string, len(args))
	for i, arg := range args {
		v, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("allocs job index: argument %d must be a string, got %T", i+1, arg)
		}
		s[i] = v
	}
	if len(s) == 2 {
		return allocJobKey(s[0], s[1], "", false), nil
	}
	return allocJobKey(s[0], s[1], s[2], true), nil
}

// allocJobKey is the key of the allocs of a job (withDeployment false)
// or of one deployment of it.
func allocJobKey(namespace, jobID, deploymentID string, withDeployment bool) []byte {
	key := make([]byte, 0, len(namespace)+len(jobID)+len(deploymentID)+3)
	key = append(append(key, namespace...), 0)
	key = append(append(key, jobID...), 0)
	if withDeployment {
		key = append(append(key, deploymentID...), 0)
	}
	return key
}

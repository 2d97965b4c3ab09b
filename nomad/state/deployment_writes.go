package state

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// ErrDeploymentRequest marks a promote or alloc-health request that the
// deployment's current state does not allow (a group without canaries, an
// unhealthy canary, an alloc of another deployment). The text after it says
// what was wrong and what would be right; endpoints answer it as a bad
// request.
var ErrDeploymentRequest = errors.New("invalid deployment request")

func badDeploymentRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDeploymentRequest, fmt.Sprintf(format, args...))
}

// CheckDeploymentPromotion reports whether req could be applied now, with
// the error UpdateDeploymentPromotion would return; endpoints call it
// before writing so that a refused request costs no raft entry.
func (s *StateStore) CheckDeploymentPromotion(req *structs.DeploymentPromoteRequest) error {
	_, _, err := promotionTxn(s.readTxn(), req)
	return err
}

// UpdateDeploymentPromotion promotes a deployment's canaries: the named
// groups (or, with All, every group that has canaries) are marked promoted,
// their canaries stop being canaries, and the eval that places the rest of
// the deployment is stored, in one write. Every canary of a promoted group
// must be healthy; otherwise nothing changes.
func (tx *Txn) UpdateDeploymentPromotion(req *structs.DeploymentPromoteRequest) error {
	txn, index := tx.txn, tx.index
	d, groups, err := promotionTxn(txn, req)
	if err != nil {
		return err
	}
	c := d.Copy()
	var canaries []string
	for _, g := range groups {
		st := c.TaskGroups[g]
		st.Promoted = true
		canaries = append(canaries, st.PlacedCanaries...)
	}
	if c.Status == structs.DeploymentStatusRunning && needsPromotion(c) == 0 {
		c.StatusDescription = structs.DeploymentStatusDescriptionRunning
	}
	c.ModifyIndex = index
	if req.UpdatedAt != 0 {
		c.ModifyTime = req.UpdatedAt
	}
	if err := txn.Insert(TableDeployments, c); err != nil {
		return fmt.Errorf("state: updating deployment %s: %w", c.ID, err)
	}
	if err := setIndex(txn, TableDeployments, index); err != nil {
		return err
	}
	js := jobSet{}
	for _, id := range canaries {
		existing, err := allocByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil || existing.DeploymentStatus == nil || !existing.DeploymentStatus.Canary {
			continue
		}
		a := existing.Copy()
		a.DeploymentStatus.Canary = false
		a.DeploymentStatus.ModifyIndex = index
		if err := insertServerChange(txn, index, a, existing, js); err != nil {
			return err
		}
	}
	if err := setIndex(txn, TableAllocs, index); err != nil {
		return err
	}
	if req.Eval != nil {
		if err := upsertEvalsTxn(txn, index, []*structs.Evaluation{req.Eval}, js); err != nil {
			return err
		}
	}
	return setJobStatuses(txn, index, js, false)
}

// needsPromotion counts the groups of d that have canaries and are not
// promoted yet.
func needsPromotion(d *structs.Deployment) int {
	n := 0
	for _, st := range d.TaskGroups {
		if st.DesiredCanaries > 0 && !st.Promoted {
			n++
		}
	}
	return n
}

// promotionTxn finds the deployment and the groups req promotes, checking
// that the request is allowed now.
func promotionTxn(txn *memdb.Txn, req *structs.DeploymentPromoteRequest) (*structs.Deployment, []string, error) {
	d, err := activeDeploymentTxn(txn, req.DeploymentID, "promote")
	if err != nil {
		return nil, nil, err
	}
	var groups []string
	if req.All {
		for name, st := range d.TaskGroups {
			if st.DesiredCanaries > 0 && !st.Promoted {
				groups = append(groups, name)
			}
		}
		if len(groups) == 0 {
			return nil, nil, badDeploymentRequest("deployment %s has no canaries waiting for promotion", structs.ShortID(d.ID))
		}
	} else {
		if len(req.Groups) == 0 {
			return nil, nil, badDeploymentRequest("Groups is empty; name the task groups to promote, or set All to promote every group")
		}
		for _, name := range req.Groups {
			st, ok := d.TaskGroups[name]
			switch {
			case !ok:
				return nil, nil, badDeploymentRequest("Groups names %q, which is not a task group of deployment %s (its groups: %v)",
					name, structs.ShortID(d.ID), sortedGroupNames(d))
			case st.DesiredCanaries == 0:
				return nil, nil, badDeploymentRequest("task group %q has no canaries to promote", name)
			case !st.Promoted:
				groups = append(groups, name)
			}
		}
	}
	sort.Strings(groups)
	for _, name := range groups {
		st := d.TaskGroups[name]
		healthy := 0
		for _, id := range st.PlacedCanaries {
			a, err := allocByIDTxn(txn, nil, id)
			if err != nil {
				return nil, nil, err
			}
			if a != nil && !a.TerminalStatus() && a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
				healthy++
			}
		}
		if healthy < st.DesiredCanaries {
			return nil, nil, badDeploymentRequest("task group %q has %d/%d healthy canaries; promote it once all are healthy",
				name, healthy, st.DesiredCanaries)
		}
	}
	return d, groups, nil
}

func sortedGroupNames(d *structs.Deployment) []string {
	out := make([]string, 0, len(d.TaskGroups))
	for name := range d.TaskGroups {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// activeDeploymentTxn returns the deployment id, which must exist and still
// be active for verb to apply to it.
func activeDeploymentTxn(txn *memdb.Txn, id, verb string) (*structs.Deployment, error) {
	d, err := deploymentByIDTxn(txn, nil, id)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("deployment %s: %w", structs.ShortID(id), structs.ErrNotFound)
	}
	if !d.Active() {
		return nil, badDeploymentRequest("cannot %s deployment %s: it is %s, and only an active deployment (running, paused, pending or blocked) can change",
			verb, structs.ShortID(d.ID), d.Status)
	}
	return d, nil
}

// CheckDeploymentAllocHealth reports whether req could be applied now, with
// the error UpdateDeploymentAllocHealth would return.
func (s *StateStore) CheckDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) error {
	_, err := allocHealthTxn(s.readTxn(), req)
	return err
}

// UpdateDeploymentAllocHealth records health verdicts on a deployment's
// allocs, stamped with the entry's Timestamp, and in the same write the
// status change, job version and eval that come with them. The
// deployment's counts and progress deadline follow through insertAlloc, as
// they do for a client's report.
func (tx *Txn) UpdateDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) error {
	txn, index := tx.txn, tx.index
	allocs, err := allocHealthTxn(txn, req)
	if err != nil {
		return err
	}
	ts := time.Unix(0, req.Timestamp).UTC()
	js := jobSet{}
	for _, v := range allocs {
		a := v.alloc.Copy()
		ds := structs.AllocDeploymentStatus{}
		if a.DeploymentStatus != nil {
			ds = *a.DeploymentStatus
		}
		healthy := v.healthy
		ds.Healthy, ds.Timestamp, ds.ModifyIndex = &healthy, ts, index
		a.DeploymentStatus = &ds
		a.ModifyIndex = index
		if err := insertAlloc(txn, index, a, v.alloc, js); err != nil {
			return err
		}
	}
	if err := setIndex(txn, TableAllocs, index); err != nil {
		return err
	}
	if err := setJobStatuses(txn, index, js, false); err != nil {
		return err
	}
	return deploymentOutcomeTxn(txn, index, req.DeploymentUpdate, req.Job, req.Eval, req.Timestamp)
}

type healthVerdict struct {
	alloc   *structs.Allocation
	healthy bool
}

func allocHealthTxn(txn *memdb.Txn, req *structs.ApplyDeploymentAllocHealthRequest) ([]healthVerdict, error) {
	d, err := activeDeploymentTxn(txn, req.DeploymentID, "set allocation health in")
	if err != nil {
		return nil, err
	}
	if len(req.HealthyAllocationIDs)+len(req.UnhealthyAllocationIDs) == 0 {
		return nil, badDeploymentRequest("HealthyAllocationIDs and UnhealthyAllocationIDs are both empty; name at least one allocation")
	}
	seen := map[string]bool{}
	var out []healthVerdict
	add := func(field string, ids []string, healthy bool) error {
		for _, id := range ids {
			if seen[id] {
				return badDeploymentRequest("%s: allocation %s is named more than once; name each allocation once, as healthy or unhealthy", field, id)
			}
			seen[id] = true
			a, err := allocByIDTxn(txn, nil, id)
			if err != nil {
				return err
			}
			if a == nil {
				return badDeploymentRequest("%s: allocation %s does not exist", field, id)
			}
			if a.DeploymentID != d.ID {
				return badDeploymentRequest("%s: allocation %s is not part of deployment %s", field, id, structs.ShortID(d.ID))
			}
			out = append(out, healthVerdict{alloc: a, healthy: healthy})
		}
		return nil
	}
	if err := add("HealthyAllocationIDs", req.HealthyAllocationIDs, true); err != nil {
		return nil, err
	}
	if err := add("UnhealthyAllocationIDs", req.UnhealthyAllocationIDs, false); err != nil {
		return nil, err
	}
	return out, nil
}

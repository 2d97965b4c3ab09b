package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// Input is everything Reconcile looks at. The reconciler never reads state
// itself, so the caller decides which snapshot the decision is based on.
type Input struct {
	// Job is the current version of the job, or nil if it was deleted.
	Job *structs.Job
	// Eval is the evaluation being processed. Its ID matters: an alloc whose
	// FollowupEvalID names it is due now (its delay or its disconnect window
	// has run out), even if the caller's clock is a little early.
	Eval *structs.Evaluation
	// Allocs are all of the job's allocations, in any status.
	Allocs []*structs.Allocation
	// Nodes holds every node an alloc of Allocs is on. A node missing from
	// the map is treated as gone (garbage-collected), like a down node.
	Nodes map[string]*structs.Node
	// Evals are the job's evaluations; pending disconnect-timeout evals of
	// allocs that reconnect are cancelled.
	Evals []*structs.Evaluation
	// Now is the only clock the reconciler reads.
	Now time.Time
	// NewID returns IDs for follow-up evaluations. It must be deterministic
	// (seeded) so that an evaluation can be replayed.
	NewID func() string
	// ReportWindow bounds how long an unknown alloc on a node that is ready
	// again waits for its client's report before it is lost; zero means
	// DefaultReportWindow.
	ReportWindow time.Duration
	// Deployment is the job's latest deployment (of its current
	// incarnation), or nil. It paces the rollout of the version it
	// belongs to; an active one of an older version is cancelled.
	Deployment *structs.Deployment
}

// DefaultReportWindow is how long an unknown alloc on a node that is ready
// again waits for its client's report. A client reports its allocs right
// after its first successful heartbeat, and holds a refused report until
// the next one, so a client that has the alloc reports it within a few
// heartbeat TTLs (10s to a few minutes, growing with the cluster); five
// minutes covers that with room. A client that has not reported by then
// does not have the alloc (its state was lost, or it was replaced by a
// fresh install): the alloc is lost, which frees its slot and resources
// (DESIGN.md, "Node lifecycle and disconnects").
const DefaultReportWindow = 5 * time.Minute

// reportWindow returns w, or the default for zero.
func reportWindow(w time.Duration) time.Duration {
	if w <= 0 {
		return DefaultReportWindow
	}
	return w
}

// Result is what Reconcile decided. Every existing allocation appears at most
// once across Stops, Updates and Disconnects, plus at most once as a
// Placement's Previous, so an alloc is never both kept and stopped.
type Result struct {
	// Stops are allocs to stop now, whatever happens to the placements.
	Stops []Stop
	// Places are new allocations to find nodes for.
	Places []Placement
	// Updates are new versions of existing allocs that keep running: in-place
	// job updates, reconnect records, follow-up eval links.
	Updates []Update
	// Disconnects are allocs on disconnected nodes to mark unknown.
	Disconnects []Disconnect
	// Keep are the existing allocs that keep their slot and are not
	// replaced (in their newest version, if an Update changes them).
	Keep []*structs.Allocation
	// Followups are evaluations to create: delayed reschedules, disconnect
	// timeouts and rolling-update waits.
	Followups []*structs.Evaluation
	// Cancel are pending evaluations that are no longer needed (disconnect
	// timeouts of allocs that reconnected), already marked canceled.
	Cancel []*structs.Evaluation
	// DesiredTGUpdates counts the decisions per group, for `job plan`.
	DesiredTGUpdates map[string]*structs.DesiredUpdates
	// Buckets is how each group's allocs were sorted, for explanations and
	// tests.
	Buckets map[string]*Buckets
	// Deployment is a deployment to create for the current job version
	// (its groups' states filled in), or nil.
	Deployment *structs.Deployment
	// DeploymentID is the deployment every placement of this result
	// joins: the one created, or the current version's active one; ""
	// when placements join none.
	DeploymentID string
	// DeploymentUpdates are status changes of deployments: an older
	// version's cancelled, the current one successful.
	DeploymentUpdates []*structs.DeploymentStatusUpdate
}

// Stop asks for an allocation to be stopped.
type Stop struct {
	// Alloc is the allocation as it should be recorded: it may be a copy that
	// already carries a new AllocState (a reconnect that lost).
	Alloc *structs.Allocation
	// Description becomes the alloc's DesiredDescription.
	Description string
	// Lost marks the alloc lost (node down or disconnect window expired),
	// which also releases its resources (promise 1).
	Lost bool
}

// PlaceReason says why a placement is made; it decides what the new alloc
// inherits from the one it replaces.
type PlaceReason uint8

const (
	// PlaceNew fills a slot nobody holds (first run, scale up, a completed
	// service alloc).
	PlaceNew PlaceReason = iota
	// PlaceReschedule replaces a failed alloc.
	PlaceReschedule
	// PlaceLost replaces an alloc on a down node or whose disconnect window
	// expired.
	PlaceLost
	// PlaceDisconnect replaces an alloc on a disconnected node while it may
	// still come back.
	PlaceDisconnect
	// PlaceMigrate moves an alloc off a draining node.
	PlaceMigrate
	// PlaceDestructive replaces an alloc of an older job version that cannot
	// be updated in place.
	PlaceDestructive
	// PlaceCanary places a canary of the current version next to the
	// allocs of the older one, which keep running until it is promoted.
	PlaceCanary
)

var placeReasonNames = [...]string{"new", "reschedule", "lost", "disconnect", "migrate", "destructive", "canary"}

func (r PlaceReason) String() string {
	if int(r) < len(placeReasonNames) {
		return placeReasonNames[r]
	}
	return "unknown"
}

// Placement asks for one new allocation of the current job.
type Placement struct {
	// Name is "job.group[index]"; a replacement keeps the name it replaces.
	Name      string
	TaskGroup *structs.TaskGroup
	Reason    PlaceReason
	// Previous is the alloc this one replaces, if any. The new alloc gets
	// PreviousAllocation = Previous.ID, and Previous gets NextAllocation.
	Previous *structs.Allocation
	// StopPrevious is the stop of Previous to commit only if this placement
	// finds a node: a failed, draining or outdated alloc keeps its slot
	// until its replacement exists.
	StopPrevious *Stop
	// RescheduleTracker is what the new alloc carries (with the event for
	// this replacement already appended), or nil.
	RescheduleTracker *structs.RescheduleTracker
	// PenaltyNodes are nodes to avoid (where the previous alloc failed).
	PenaltyNodes []string
	// NodeID, for system jobs, is the one node the alloc must go on.
	NodeID string
	// Canary marks the new alloc a canary of the deployment: a canary
	// placed for a new version, or the replacement of one (a rescheduled
	// canary stays a canary).
	Canary bool
}

// UpdateKind says what changed in an Update; several may apply at once.
type UpdateKind uint8

const (
	// UpdateInPlace moves the alloc to the current job version.
	UpdateInPlace UpdateKind = 1 << iota
	// UpdateReconnect records that the alloc reconnected (an AllocState
	// entry), so later evaluations do not reconnect it again.
	UpdateReconnect
	// UpdateFollowup links a failed alloc to its delayed reschedule eval.
	UpdateFollowup
)

func (k UpdateKind) String() string {
	s := ""
	for _, p := range []struct {
		k UpdateKind
		n string
	}{{UpdateInPlace, "in-place"}, {UpdateReconnect, "reconnect"}, {UpdateFollowup, "followup"}} {
		if k&p.k != 0 {
			if s != "" {
				s += "+"
			}
			s += p.n
		}
	}
	return s
}

// Update is a new version of an allocation that keeps running (or, for a
// failed one, keeps waiting for its reschedule).
type Update struct {
	Alloc *structs.Allocation
	Kind  UpdateKind
}

// Disconnect marks an allocation on a disconnected node unknown.
type Disconnect struct {
	Alloc *structs.Allocation
	// FollowupEvalID is the eval that fires when the disconnect window
	// expires and the alloc becomes lost (empty if it never expires).
	FollowupEvalID string
}

// Stop descriptions, shown by `alloc status`.
const (
	DescJobStopped        = "alloc not needed since job was stopped"
	DescGroupRemoved      = "alloc not needed since its group was removed from the job"
	DescScaleDown         = "alloc not needed due to scale down"
	DescUpdated           = "alloc is being updated due to job update"
	DescMigrating         = "alloc is being migrated off a draining node"
	DescRescheduled       = "alloc was rescheduled because it failed"
	DescLost              = "alloc is lost since its node is down"
	DescExpired           = "alloc is lost since its disconnect window expired"
	DescUnreported        = "alloc is lost since its client did not report it after its node came back"
	DescUnknown           = "alloc is unknown since its node is disconnected"
	DescReconnectLoser    = "alloc not needed after its node reconnected: the other copy was kept"
	DescNodeNotEligible   = "alloc not needed since its node no longer matches the job"
	DescOriginalCompleted = "alloc not needed since the original completed while disconnected"
	DescCanaryPromoted    = "alloc not needed since a promoted canary replaced it"
	DescCanaryDeployment  = "alloc not needed since its canary deployment did not succeed"
)

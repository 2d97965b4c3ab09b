package structs

import (
	"fmt"
	"time"
)

// This file is the one place the allocation state machine is written down
// (DESIGN.md, "Who may change what"). Both the RPC endpoints and the FSM
// consult it; the FSM refuses an update that breaks it.
//
//	ClientStatus: pending -> running -> complete | failed
//	              pending|running -> lost      (server, node down or disconnect expired)
//	              pending|running -> unknown   (server, node disconnected)
//	              unknown -> pending|running|complete|failed (client, after reconnect)
//	              unknown -> lost              (server, disconnect window expired)
//	DesiredStatus: run -> stop | evict   (never back to run)

// Actor says who proposes a change, because servers and clients own
// different fields.
type Actor int

const (
	// ActorClient is a client reporting through Node.UpdateAlloc.
	ActorClient Actor = iota
	// ActorServer is the scheduler through a committed plan.
	ActorServer
)

func (a Actor) String() string {
	if a == ActorServer {
		return "server"
	}
	return "client"
}

// ClientTerminalStatus reports whether the client status is final.
func ClientTerminalStatus(s string) bool {
	switch s {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// ValidClientStatus reports whether s is a known client status.
func ValidClientStatus(s string) bool {
	switch s {
	case AllocClientStatusPending, AllocClientStatusRunning, AllocClientStatusComplete,
		AllocClientStatusFailed, AllocClientStatusLost, AllocClientStatusUnknown:
		return true
	}
	return false
}

// ValidateClientTransition checks a ClientStatus change proposed by actor.
// Staying in the same status is always allowed (task states still change).
func ValidateClientTransition(actor Actor, from, to string) error {
	if !ValidClientStatus(to) {
		return fmt.Errorf("%w: client status %q is not one of pending, running, complete, failed, lost, unknown", ErrInvalidTransition, to)
	}
	if from == to {
		return nil
	}
	if from == "" {
		// A new allocation starts pending; a server may create it so.
		if to == AllocClientStatusPending {
			return nil
		}
		return fmt.Errorf("%w: a new allocation must start pending, not %q", ErrInvalidTransition, to)
	}
	if ClientTerminalStatus(from) {
		return fmt.Errorf("%w: client status %q is terminal and cannot become %q", ErrInvalidTransition, from, to)
	}
	switch actor {
	case ActorClient:
		switch to {
		case AllocClientStatusLost, AllocClientStatusUnknown:
			return fmt.Errorf("%w: only a server may set client status %q", ErrInvalidTransition, to)
		case AllocClientStatusPending:
			// A reconnecting client may still be starting the task.
			if from != AllocClientStatusUnknown {
				return fmt.Errorf("%w: client status %q cannot go back to pending", ErrInvalidTransition, from)
			}
		}
		return nil
	case ActorServer:
		switch to {
		case AllocClientStatusLost, AllocClientStatusUnknown:
			return nil
		}
		return fmt.Errorf("%w: a server may only set client status lost or unknown, not %q", ErrInvalidTransition, to)
	}
	return fmt.Errorf("%w: unknown actor", ErrInvalidTransition)
}

// ValidateDesiredTransition checks a DesiredStatus change: run may become
// stop or evict, and nothing goes back to run.
func ValidateDesiredTransition(from, to string) error {
	switch to {
	case AllocDesiredStatusRun, AllocDesiredStatusStop, AllocDesiredStatusEvict:
	default:
		return fmt.Errorf("%w: desired status %q is not one of run, stop, evict", ErrInvalidTransition, to)
	}
	if from == to || from == "" || from == AllocDesiredStatusRun {
		return nil
	}
	if to == AllocDesiredStatusRun {
		return fmt.Errorf("%w: desired status %q cannot go back to run", ErrInvalidTransition, from)
	}
	return nil
}

// ClientTerminalStatus reports whether the client has finished with the
// allocation (or the server declared it lost).
func (a *Allocation) ClientTerminalStatus() bool { return ClientTerminalStatus(a.ClientStatus) }

// ServerTerminalStatus reports whether the servers want the alloc stopped.
func (a *Allocation) ServerTerminalStatus() bool {
	return a.DesiredStatus == AllocDesiredStatusStop || a.DesiredStatus == AllocDesiredStatusEvict
}

// TerminalStatus reports whether the alloc is finished from either side: the
// scheduler no longer counts it toward the group's count.
func (a *Allocation) TerminalStatus() bool {
	return a.ServerTerminalStatus() || a.ClientTerminalStatus()
}

// HoldsResources reports whether the alloc's CPU, memory, disk and ports
// still count against its node. This is promise 1: an alloc the servers want
// stopped keeps its resources until its client says it has stopped (or the
// node is down and the alloc is lost). Every fit check uses this.
func (a *Allocation) HoldsResources() bool { return !a.ClientTerminalStatus() }

// LastClientStatusState returns the newest ClientStatus entry of AllocStates.
func (a *Allocation) LastClientStatusState() *AllocState {
	for i := len(a.AllocStates) - 1; i >= 0; i-- {
		if a.AllocStates[i].Field == AllocStateFieldClientStatus {
			return a.AllocStates[i]
		}
	}
	return nil
}

// NeedsToReconnect reports whether the alloc was marked unknown by a
// disconnect and has not been reconnected since: its newest ClientStatus
// history entry is `unknown`.
func (a *Allocation) NeedsToReconnect() bool {
	s := a.LastClientStatusState()
	return s != nil && s.Value == AllocClientStatusUnknown
}

// DisconnectedAt returns when the alloc became unknown, if it is waiting to
// reconnect.
func (a *Allocation) DisconnectedAt() (time.Time, bool) {
	s := a.LastClientStatusState()
	if s == nil || s.Value != AllocClientStatusUnknown {
		return time.Time{}, false
	}
	return s.Time, true
}

// AppendState records a status change in the alloc's history. The caller
// supplies the time (from the plan or the log entry, never the FSM clock).
func (a *Allocation) AppendState(field, value string, t time.Time) {
	a.AllocStates = append(a.AllocStates, &AllocState{Field: field, Value: value, Time: t})
}

// StaleClientReport reports whether update, a client's report about a,
// must be ignored because it was based on an older version of a than the
// servers' latest change to it (DESIGN promise 3: a report older than an
// assignment never undoes it).
//
// A report's basis is its AllocModifyIndex: the version of the alloc the
// client last received and acted on. Every server change a client must see
// (a placement, an in-place update, a stop, a lost or unknown mark, a
// reconnect decision) moves a's AllocModifyIndex past it, so a report
// with a lower basis was made without knowing of that change: it would
// overwrite an unknown mark with what the client saw before the
// disconnect, or speak for a version that was since stopped or replaced.
// Such a report is ignored, and the client, which reads the newer version
// through its assignment, reports again on it.
//
// Two kinds of report are always taken. A terminal one (complete,
// failed): the work has stopped whatever the client knew, and holding its
// resources for a newer report would only leak them. And one without a
// basis (AllocModifyIndex 0): from a client of a release before the basis
// was sent, which is checked only against the state machine, as it was
// then. A basis above a's (a client that read a server further ahead
// than this one) is current.
func (a *Allocation) StaleClientReport(update *Allocation) bool {
	return update.AllocModifyIndex != 0 && update.AllocModifyIndex < a.AllocModifyIndex &&
		!ClientTerminalStatus(update.ClientStatus)
}

// ApplyClientUpdate returns a copy of a with the client-owned fields of
// update (ClientStatus, ClientDescription, TaskStates, DeploymentStatus,
// NetworkStatus), after checking the transition. Server-owned fields of
// update are ignored: a client cannot change what the servers decided.
//
// The copy is shallow where the client cannot write: the job, allocated
// resources, placement metrics, alloc states, reschedule tracker and
// preempted allocs are a's own, shared with it. Both versions are stored
// and so never changed (a caller changes a copy of its own); copying them
// on every report only made each report cost a whole alloc. The fields
// taken from update are copied, so the result shares nothing with update.
func (a *Allocation) ApplyClientUpdate(update *Allocation) (*Allocation, error) {
	if err := ValidateClientTransition(ActorClient, a.ClientStatus, update.ClientStatus); err != nil {
		return nil, fmt.Errorf("alloc %s: %w", ShortID(a.ID), err)
	}
	cv := *a
	c := &cv
	if a.DeploymentStatus != nil {
		d := *a.DeploymentStatus
		c.DeploymentStatus = &d
	}
	c.ClientStatus = update.ClientStatus
	c.ClientDescription = update.ClientDescription
	if update.TaskStates != nil {
		c.TaskStates = make(map[string]*TaskState, len(update.TaskStates))
		for k, v := range update.TaskStates {
			c.TaskStates[k] = v.Copy()
		}
	}
	if update.DeploymentStatus != nil {
		// Health is the client's verdict; whether the alloc is a canary is
		// the servers' (promotion clears it), so a report made before a
		// promotion cannot make a promoted alloc a canary again.
		d := *update.DeploymentStatus
		d.Canary = a.DeploymentStatus != nil && a.DeploymentStatus.Canary
		c.DeploymentStatus = &d
	}
	if update.NetworkStatus != nil {
		n := *update.NetworkStatus
		c.NetworkStatus = &n
	}
	return c, nil
}

// ValidateServerUpdate checks that a plan's version of an existing alloc
// changes only what a server may: desired fields never go back to run, and
// the client status only moves to lost or unknown (or stays).
func ValidateServerUpdate(existing, proposed *Allocation) error {
	if err := ValidateDesiredTransition(existing.DesiredStatus, proposed.DesiredStatus); err != nil {
		return fmt.Errorf("alloc %s: %w", ShortID(existing.ID), err)
	}
	// Plans carry the client status of the scheduler's snapshot, which may
	// be stale; only a server's own marks (lost, unknown) are checked.
	marks := proposed.ClientStatus == AllocClientStatusLost || proposed.ClientStatus == AllocClientStatusUnknown
	if marks && proposed.ClientStatus != existing.ClientStatus {
		if err := ValidateClientTransition(ActorServer, existing.ClientStatus, proposed.ClientStatus); err != nil {
			return fmt.Errorf("alloc %s: %w", ShortID(existing.ID), err)
		}
	}
	return nil
}

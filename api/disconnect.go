package api

import "time"

// Reconcile options: which allocation survives when a disconnected client
// comes back and both the original and its replacement are running.
const (
	ReconcileOptionKeepOriginal    = "keep_original"
	ReconcileOptionKeepReplacement = "keep_replacement"
	ReconcileOptionBestScore       = "best_score"
	ReconcileOptionLongestRunning  = "longest_running"
)

// DisconnectStrategy says what servers and the client do while a client
// cannot reach the servers.
type DisconnectStrategy struct {
	// LostAfter is how long the servers treat the allocations of an
	// unresponsive node as "unknown" (still running, maybe) before they are
	// marked lost. Zero means they are lost as soon as the node is down.
	LostAfter *time.Duration

	// StopOnClientAfter is how long a client that cannot reach any server
	// keeps the allocations running before it stops them itself.
	StopOnClientAfter *time.Duration

	// Replace says whether the servers place replacements for unknown
	// allocations while the node is disconnected.
	Replace *bool

	// Reconcile picks which of the original and replacement to keep once
	// the node is back; one of the ReconcileOption constants.
	Reconcile *string
}

// NewDefaultDisconnectStrategy returns the strategy of a group whose
// disconnect block sets nothing.
func NewDefaultDisconnectStrategy() *DisconnectStrategy {
	return &DisconnectStrategy{
		LostAfter: new(time.Duration(0)),
		Replace:   new(true),
		Reconcile: new(ReconcileOptionBestScore),
	}
}

// Canonicalize fills the fields that have defaults. LostAfter and
// StopOnClientAfter stay nil when unset: nil means "not configured", which
// the scheduler reads differently from an explicit zero.
func (d *DisconnectStrategy) Canonicalize() {
	if d.Replace == nil {
		d.Replace = new(true)
	}
	if d.Reconcile == nil {
		d.Reconcile = new(ReconcileOptionBestScore)
	}
}

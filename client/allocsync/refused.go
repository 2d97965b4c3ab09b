package allocsync

import (
	"errors"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// RefusedOnMerit reports a remote error about an alloc update itself, as
// opposed to the node's state (not ready until it heartbeats; unknown to
// the servers or refusing its secret, until it registers again), the
// cluster's (no leader) or the network's: only those others are worth
// holding and resending; an update refused on its merits is dropped.
func RefusedOnMerit(err error) bool {
	if !rpcx.IsRemoteError(err) {
		return false
	}
	for _, notOnMerit := range []error{structs.ErrNodeNotReady, structs.ErrNoLeader, structs.ErrNotLeader,
		structs.ErrNotFound, structs.ErrNodeSecretDenied, structs.ErrNodeSecretMissing} {
		if errors.Is(err, notOnMerit) {
			return false
		}
	}
	return true
}

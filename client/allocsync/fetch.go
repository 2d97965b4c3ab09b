package allocsync

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Caller makes one RPC to the servers.
type Caller func(ctx context.Context, method string, args, reply any) error

// Query is who reads and how long a read may block.
type Query struct {
	NodeID, SecretID, Region string
	Wait                     time.Duration
}

// FetchChanged reads the allocs of an assignment (alloc ID → the
// AllocModifyIndex the servers assigned at index) whose version moved past
// what the node knows (known), following the servers' pages. The read asks
// for state at least as new as the assignment (MinQueryIndex = index-1: a
// blocking query answers once the server's index exceeds it), so a
// follower that lags cannot hand back older versions; a version older than
// the assignment names is refused anyway. The servers answer a page at a
// time within a byte budget below the RPC message limit (allocs embed
// their jobs, which may be large); each page is held to the same index.
func FetchChanged(ctx context.Context, call Caller, q Query, assigned map[string]uint64, index uint64, known map[string]uint64) ([]*structs.Allocation, error) {
	var pull []string
	for id, mi := range assigned {
		if k, ok := known[id]; !ok || mi > k {
			pull = append(pull, id)
		}
	}
	if len(pull) == 0 {
		return nil, nil
	}
	sort.Strings(pull)
	req := &structs.AllocsGetRequest{AllocIDs: pull, NodeID: q.NodeID, SecretID: q.SecretID, QueryOptions: structs.QueryOptions{
		Region: q.Region, MinQueryIndex: max(index, 1) - 1, MaxQueryTime: q.Wait, AllowStale: true}}
	var fetched []*structs.Allocation
	for {
		var resp structs.AllocsGetResponse
		if err := call(ctx, "Alloc.GetAllocs", req, &resp); err != nil {
			return nil, err
		}
		if resp.Index < index {
			return nil, fmt.Errorf("stale alloc read: index %d is older than assignment index %d", resp.Index, index)
		}
		for _, a := range resp.Allocs {
			if a.AllocModifyIndex < assigned[a.ID] {
				return nil, fmt.Errorf("stale alloc %s: version %d is older than assigned %d", structs.ShortID(a.ID), a.AllocModifyIndex, assigned[a.ID])
			}
		}
		fetched = append(fetched, resp.Allocs...)
		if resp.NextToken == "" {
			return fetched, nil
		}
		if resp.NextToken <= req.NextToken {
			return nil, fmt.Errorf("alloc read: page token %q after %q does not move forward", resp.NextToken, req.NextToken)
		}
		req.NextToken = resp.NextToken
	}
}

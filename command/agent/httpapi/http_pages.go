package httpapi

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// followPages reads a whole list from a list RPC. Servers answer lists a
// page at a time, each within a byte budget below the RPC message limit
// (see nomad/list_paging.go), so that a list of large objects can cross
// the network at all; an HTTP answer has no such limit, and the user asked
// for the list, so the handler follows the pages to the end.
//
// q is the request's QueryOptions, which call sends: the caller's own
// per_page and next_token are cleared here (the handler applies them with
// paginate, after ?filter=, to the whole list), and the pages after the
// first do not block: the first page waited for the change, if asked to.
// The meta returned is the first page's, whose index is the oldest the
// answer reflects, so a caller blocking on it never misses a change.
func followPages[T any](q *structs.QueryOptions, call func() ([]T, *structs.QueryMeta, error)) ([]T, structs.QueryMeta, error) {
	q.PerPage, q.NextToken = 0, ""
	var all []T
	var meta structs.QueryMeta
	for first := true; ; first = false {
		items, m, err := call()
		if err != nil {
			return nil, meta, err
		}
		if first {
			meta = *m
			meta.NextToken = ""
		}
		all = append(all, items...)
		if m.NextToken == "" {
			return all, meta, nil
		}
		if m.NextToken <= q.NextToken {
			// Tokens only move forward; a server that answers otherwise
			// would keep this loop going for ever.
			return nil, meta, fmt.Errorf("the server answered page token %q after %q: list pages must move forward", m.NextToken, q.NextToken)
		}
		q.NextToken = m.NextToken
		q.MinQueryIndex = 0
	}
}

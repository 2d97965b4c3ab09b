package nomad

import (
	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// heldQueryRights is what a held blocking query was allowed when it began
// waiting. The endpoint checked the token before the wait; the wait can
// last minutes, and rights that end must end for held queries too
// (DESIGN.md, promise 9). So each wake re-resolves the token before the
// query runs again on the new state.
type heldQueryRights struct {
	s       *Server
	opts    *structs.QueryOptions
	granted *acl.ACL
	checked bool
}

// heldRights records the ACL opts's token resolves to now, as the query
// starts to wait (a read that answers at once never pays for it). A query with
// ACLs off, or whose caller is not a token holder (a server, or a client
// authenticating with its node secret), is not re-checked: its rights
// do not come from a token that can be deleted or narrowed.
func (s *Server) heldRights(opts *structs.QueryOptions) heldQueryRights {
	if !s.config.ACLEnabled {
		return heldQueryRights{}
	}
	a, err := s.aclFor(opts)
	if err != nil || a == nil {
		return heldQueryRights{}
	}
	return heldQueryRights{s: s, opts: opts, granted: a, checked: true}
}

// stand reports whether the query may run again with the rights it was
// granted. A token deleted or expired since ends the query with
// ErrTokenNotFound. A token whose policies changed ends it with no error
// and the answer it had: the index is unchanged, so the caller asks
// again, and that new request is checked against the rights as they are.
func (h heldQueryRights) stand() (bool, error) {
	if !h.checked {
		return true, nil
	}
	a, err := h.s.aclFor(h.opts)
	if err != nil {
		return false, err
	}
	return a == h.granted, nil
}

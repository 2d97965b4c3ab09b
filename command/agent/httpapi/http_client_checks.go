package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/client/checks"
)

// ClientChecks is what a client that runs service checks offers (the
// real client does; a test's fake may not).
type ClientChecks interface {
	AllocChecks(allocID string) (map[string]checks.Result, error)
}

// clientAllocChecks answers GET /v1/client/allocation/:id/checks with the
// alloc's service check results, in the shape of Nomad's
// AllocCheckStatuses: a map of check ID to its latest result. Like the
// other client requests it is forwarded to the agent that runs the alloc.
func (s *httpAPI) clientAllocChecks(w http.ResponseWriter, r *http.Request) {
	allocID, local, err := s.locateAlloc(w, r, capsAllocRead)
	if err != nil || !local {
		if err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	c, ok := s.client.(ClientChecks)
	if !ok {
		s.writeError(w, r, &codedError{code: http.StatusNotImplemented, msg: "this agent's client runs no service checks"})
		return
	}
	results, err := c.AllocChecks(allocID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, results)
}

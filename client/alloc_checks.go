package client

import (
	"fmt"

	"github.com/drover-sched/drover/client/checks"
)

// AllocChecks returns the latest result of each of the alloc's service
// checks, by check ID (empty for an alloc without checks).
func (c *Client) AllocChecks(allocID string) (map[string]checks.Result, error) {
	ar := c.runner(allocID)
	if ar == nil {
		return nil, fmt.Errorf("%w %s", ErrUnknownAlloc, allocID)
	}
	return ar.CheckResults(), nil
}

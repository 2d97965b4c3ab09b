package client

import (
	"context"

	"github.com/drover-sched/drover/structs"
)

// serviceCatalog reads native service registrations for the templates of
// this node's allocs, as the node (ServiceRegistration.ForAlloc): a
// blocking query when minIndex is set, bounded by BlockingQueryWait.
type serviceCatalog struct{ c *Client }

func (s serviceCatalog) ForAlloc(ctx context.Context, allocID string, minIndex uint64) ([]*structs.ServiceRegistration, uint64, error) {
	nodeID, secretID := s.c.identity()
	req := &structs.ServiceRegistrationsForAllocRequest{AllocID: allocID, NodeID: nodeID, SecretID: secretID,
		QueryOptions: structs.QueryOptions{Region: s.c.cfg.Region, MinQueryIndex: minIndex,
			MaxQueryTime: s.c.cfg.BlockingQueryWait, AllowStale: true}}
	var resp structs.ServiceRegistrationByNameResponse
	if err := s.c.rpc.RPC(ctx, "ServiceRegistration.ForAlloc", req, &resp); err != nil {
		return nil, 0, err
	}
	return resp.Services, resp.Index, nil
}

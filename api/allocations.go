package api

// Allocations is the /v1/allocations and /v1/allocation/:id family.
type Allocations struct{ c *Client }

// Allocations returns the allocation endpoints.
func (c *Client) Allocations() *Allocations { return &Allocations{c: c} }

// List lists allocations (GET /v1/allocations).
func (a *Allocations) List(q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	return queryList[*AllocationListStub](a.c, "/v1/allocations", q)
}

// PrefixList lists allocations whose ID starts with prefix.
func (a *Allocations) PrefixList(prefix string) ([]*AllocationListStub, *QueryMeta, error) {
	return a.List(&QueryOptions{Prefix: prefix})
}

// Info reads one allocation (GET /v1/allocation/:id).
func (a *Allocations) Info(allocID string, q *QueryOptions) (*Allocation, *QueryMeta, error) {
	return queryOne[Allocation](a.c, "/v1/allocation/"+escape(allocID), q)
}

// Stop asks the servers to stop an allocation and place a replacement
// (POST /v1/allocation/:id/stop). The answer names the evaluation that does
// it.
func (a *Allocations) Stop(allocID string, w *WriteOptions) (*AllocStopResponse, error) {
	var out AllocStopResponse
	wm, err := a.c.post("/v1/allocation/"+escape(allocID)+"/stop", nil, &out, w)
	if err != nil {
		return nil, err
	}
	out.WriteMeta = *wm
	return &out, nil
}

// Stats reads an allocation's resource usage from its client.
func (a *Allocations) Stats(allocID string, q *QueryOptions) (*AllocResourceUsage, error) {
	var out AllocResourceUsage
	if _, err := a.c.query("/v1/client/allocation/"+escape(allocID)+"/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

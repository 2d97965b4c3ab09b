package api

// Nodes is the /v1/nodes and /v1/node/:id family.
type Nodes struct{ c *Client }

// Nodes returns the node endpoints.
func (c *Client) Nodes() *Nodes { return &Nodes{c: c} }

// List lists nodes (GET /v1/nodes).
func (n *Nodes) List(q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	return queryList[*NodeListStub](n.c, "/v1/nodes", q)
}

// PrefixList lists nodes whose ID starts with prefix.
func (n *Nodes) PrefixList(prefix string) ([]*NodeListStub, *QueryMeta, error) {
	return n.List(&QueryOptions{Prefix: prefix})
}

// Info reads one node.
func (n *Nodes) Info(nodeID string, q *QueryOptions) (*Node, *QueryMeta, error) {
	return queryOne[Node](n.c, "/v1/node/"+escape(nodeID), q)
}

// Allocations lists the allocations placed on a node.
func (n *Nodes) Allocations(nodeID string, q *QueryOptions) ([]*Allocation, *QueryMeta, error) {
	return queryList[*Allocation](n.c, "/v1/node/"+escape(nodeID)+"/allocations", q)
}

// UpdateDrain starts (spec set) or ends (spec nil) a drain. Ending a drain
// with markEligible makes the node eligible for new work again; starting
// one with markEligible makes it eligible once the drain completes.
func (n *Nodes) UpdateDrain(nodeID string, spec *DrainSpec, markEligible bool, w *WriteOptions) (*NodeDrainUpdateResponse, error) {
	return n.UpdateDrainOpts(nodeID, &NodeUpdateDrainRequest{DrainSpec: spec, MarkEligible: markEligible}, w)
}

// UpdateDrainOpts is UpdateDrain with the full request, for Meta.
func (n *Nodes) UpdateDrainOpts(nodeID string, req *NodeUpdateDrainRequest, w *WriteOptions) (*NodeDrainUpdateResponse, error) {
	r := *req
	r.NodeID = nodeID
	var out NodeDrainUpdateResponse
	wm, err := n.c.put("/v1/node/"+escape(nodeID)+"/drain", &r, &out, w)
	if err != nil {
		return nil, err
	}
	out.WriteMeta = *wm
	return &out, nil
}

// ToggleEligibility makes a node eligible or ineligible for new work.
// Allocations already on it keep running either way.
func (n *Nodes) ToggleEligibility(nodeID string, eligible bool, w *WriteOptions) (*NodeEligibilityUpdateResponse, error) {
	req := &NodeUpdateEligibilityRequest{NodeID: nodeID, Eligibility: NodeSchedulingIneligible}
	if eligible {
		req.Eligibility = NodeSchedulingEligible
	}
	var out NodeEligibilityUpdateResponse
	wm, err := n.c.put("/v1/node/"+escape(nodeID)+"/eligibility", req, &out, w)
	if err != nil {
		return nil, err
	}
	out.WriteMeta = *wm
	return &out, nil
}

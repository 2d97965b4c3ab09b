package httpapi

import (
	"net/http"
	"strings"

	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeNodes(mux *http.ServeMux) {
	s.handle(mux, "/v1/nodes", s.nodesList, read...)
	s.handle(mux, "/v1/node/{id}", s.nodeGet, read...)
	s.handle(mux, "/v1/node/{id}", s.nodePurge, http.MethodDelete)
	s.handle(mux, "/v1/node/{id}/purge", s.nodePurge, write...)
	s.handle(mux, "/v1/node/{id}/allocations", s.nodeAllocations, read...)
	s.handle(mux, "/v1/node/{id}/drain", s.nodeDrain, write...)
	s.handle(mux, "/v1/node/{id}/eligibility", s.nodeEligibility, write...)
	s.handle(mux, "/v1/node/{id}/evaluate", s.nodeEvaluate, write...)
}

func (s *httpAPI) nodesList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.NodeListRequest
	return serveList(s, w, r, &args.QueryOptions, func() ([]*structs.NodeListStub, structs.QueryMeta, error) {
		nodes, meta, err := s.allNodes(r, &args)
		// Filled before filtering, so the filter sees the stubs as sent.
		for _, n := range nodes {
			fillNodeStub(n)
		}
		return nodes, meta, err
	}, func(n *structs.NodeListStub) string { return n.ID })
}

// allNodes reads every page of Node.List.
func (s *httpAPI) allNodes(r *http.Request, args *structs.NodeListRequest) ([]*structs.NodeListStub, structs.QueryMeta, error) {
	return followPages(&args.QueryOptions, func() ([]*structs.NodeListStub, *structs.QueryMeta, error) {
		var out structs.NodeListResponse
		err := s.call(r, "Node.List", args, &out)
		return out.Nodes, &out.QueryMeta, err
	})
}

// fillNodeStub sets the fields Nomad's CLI dereferences without a nil
// check (node status prints resources for every node).
func fillNodeStub(n *structs.NodeListStub) {
	if n.NodeResources == nil {
		n.NodeResources = &structs.NodeResources{}
	}
	if n.ReservedResources == nil {
		n.ReservedResources = &structs.NodeReservedResources{}
	}
	if n.Attributes.IsNil() {
		n.Attributes = structs.NewAttributes(map[string]string{})
	}
	if n.Drivers == nil {
		n.Drivers = map[string]*structs.DriverInfo{}
	}
}

func fillNode(n *structs.Node) {
	if n.NodeResources == nil {
		n.NodeResources = &structs.NodeResources{}
	}
	if n.ReservedResources == nil {
		n.ReservedResources = &structs.NodeReservedResources{}
	}
	if n.Events == nil {
		n.Events = []*structs.NodeEvent{}
	}
}

// fullIDLen is the length of a UUID; anything shorter is a prefix.
const fullIDLen = 36

// resolveNodeID turns a node ID prefix into the one node ID it names, the
// way the CLI lets people type the first few characters of an ID.
func (s *httpAPI) resolveNodeID(r *http.Request, id string) (string, error) {
	if len(id) >= fullIDLen {
		return id, nil
	}
	args := structs.NodeListRequest{}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return "", err
	}
	args.MinQueryIndex, args.MaxQueryTime = 0, 0
	args.Prefix = id
	var out structs.NodeListResponse
	if err := s.call(r, "Node.List", &args, &out); err != nil {
		return "", err
	}
	return uniqueMatch("node", id, len(out.Nodes), func(i int) string { return out.Nodes[i].ID })
}

// uniqueMatch returns the single ID a prefix matched, or says why not.
func uniqueMatch(kind, prefix string, n int, idAt func(int) string) (string, error) {
	switch n {
	case 0:
		return "", notFound("%s %q not found", kind, prefix)
	case 1:
		return idAt(0), nil
	}
	ids := make([]string, 0, n)
	for i := 0; i < n && i < 10; i++ {
		ids = append(ids, idAt(i))
	}
	return "", badRequest("%s prefix %q is ambiguous: it matches %d %ss (%s); give more characters", kind, prefix, n, kind, strings.Join(ids, ", "))
}

func (s *httpAPI) nodeGet(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := s.resolveNodeID(r, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	args := structs.NodeSpecificRequest{NodeID: id}
	var out structs.SingleNodeResponse
	if err := s.read(w, r, &args.QueryOptions, "Node.GetNode", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	if out.Node == nil {
		return nil, notFound("node %q not found", id)
	}
	fillNode(out.Node)
	return newNodeOut(out.Node), nil
}

func (s *httpAPI) nodeAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: r.PathValue("id")}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	return serveAllPages(w, &args.QueryOptions, func() ([]*structs.Allocation, *structs.QueryMeta, error) {
		var out structs.NodeAllocsResponse
		err := s.call(r, "Node.GetAllocs", &args, &out)
		return out.Allocs, &out.QueryMeta, err
	})
}

// nodeDrainBody is Nomad's drain request: a nil DrainSpec ends a drain.
type nodeDrainBody struct {
	NodeID       string
	DrainSpec    *structs.DrainSpec
	MarkEligible bool
	Meta         map[string]string
}

func (s *httpAPI) nodeDrain(w http.ResponseWriter, r *http.Request) (any, error) {
	var body nodeDrainBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := checkBodyNodeID(r, &body.NodeID); err != nil {
		return nil, err
	}
	args := structs.NodeUpdateDrainRequest{NodeID: body.NodeID, MarkEligible: body.MarkEligible, Meta: body.Meta}
	if body.DrainSpec != nil {
		args.DrainStrategy = &structs.DrainStrategy{DrainSpec: *body.DrainSpec}
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.NodeDrainUpdateResponse
	if err := s.call(r, "Node.UpdateDrain", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	out.EvalIDs = nonNil(out.EvalIDs)
	return &out, nil
}

func (s *httpAPI) nodeEligibility(w http.ResponseWriter, r *http.Request) (any, error) {
	var body struct {
		NodeID      string
		Eligibility string
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := checkBodyNodeID(r, &body.NodeID); err != nil {
		return nil, err
	}
	switch body.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return nil, badRequest("Eligibility %q must be %q or %q", body.Eligibility, structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
	}
	args := structs.NodeUpdateEligibilityRequest{NodeID: body.NodeID, Eligibility: body.Eligibility}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.NodeEligibilityUpdateResponse
	if err := s.call(r, "Node.UpdateEligibility", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	out.EvalIDs = nonNil(out.EvalIDs)
	return &out, nil
}

// nodeEvaluate creates evaluations for the node's jobs (`node eval`).
func (s *httpAPI) nodeEvaluate(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeEvaluateRequest{NodeID: r.PathValue("id")}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.NodeUpdateResponse
	if err := s.call(r, "Node.Evaluate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, max(out.Index, out.EvalCreateIndex))
	out.EvalIDs = nonNil(out.EvalIDs)
	resp := &nodeEvaluateResponse{NodeUpdateResponse: out}
	if len(out.EvalIDs) > 0 {
		resp.EvalID = out.EvalIDs[0]
	}
	return resp, nil
}

// nodeEvaluateResponse adds EvalID, the first of EvalIDs, which is what
// Nomad's Go client reads (Nodes().ForceEvaluate).
type nodeEvaluateResponse struct {
	structs.NodeUpdateResponse
	EvalID string
}

func (s *httpAPI) nodePurge(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeDeregisterRequest{NodeID: r.PathValue("id")}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.NodeUpdateResponse
	if err := s.call(r, "Node.Deregister", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, max(out.Index, out.NodeModifyIndex))
	out.EvalIDs = nonNil(out.EvalIDs)
	return &out, nil
}

func checkBodyNodeID(r *http.Request, bodyID *string) error {
	id := r.PathValue("id")
	if *bodyID != "" && *bodyID != id {
		return badRequest("NodeID %q in the body does not match %q in the path", *bodyID, id)
	}
	*bodyID = id
	return nil
}

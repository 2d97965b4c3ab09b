package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

// The deployment writes, in Nomad's shapes: each takes the deployment's
// full ID in the path and, where Nomad's has one, a JSON body whose
// DeploymentID (optional) must match it; each answers a
// DeploymentUpdateResponse. Bodies are optional here so that the server
// checks the token before it judges what the body asks (a caller without
// a token learns nothing from a 400): an empty pause body resumes, and an
// empty promote or health body is refused by the server, after the token.

func (s *httpAPI) deploymentAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentSpecificRequest{DeploymentID: r.PathValue("id")}
	var out structs.DeploymentAllocsResponse
	if err := s.read(w, r, &args.QueryOptions, "Deployment.Allocations", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	return nonNil(out.Allocations), nil
}

func (s *httpAPI) deploymentPromote(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.DeploymentPromoteRequest
	if err := optionalBody(r, &args); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "DeploymentID", &args.DeploymentID); err != nil {
		return nil, err
	}
	args.Eval, args.UpdatedAt = nil, 0
	return s.deploymentWrite(w, r, "Deployment.Promote", &args, &args.WriteRequest)
}

func (s *httpAPI) deploymentPause(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.DeploymentPauseRequest
	if err := optionalBody(r, &args); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "DeploymentID", &args.DeploymentID); err != nil {
		return nil, err
	}
	return s.deploymentWrite(w, r, "Deployment.Pause", &args, &args.WriteRequest)
}

func (s *httpAPI) deploymentFail(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentFailRequest{DeploymentID: r.PathValue("id")}
	return s.deploymentWrite(w, r, "Deployment.Fail", &args, &args.WriteRequest)
}

func (s *httpAPI) deploymentUnblock(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentUnblockRequest{DeploymentID: r.PathValue("id")}
	return s.deploymentWrite(w, r, "Deployment.Unblock", &args, &args.WriteRequest)
}

func (s *httpAPI) deploymentAllocHealth(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.DeploymentAllocHealthRequest
	if err := optionalBody(r, &args); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "DeploymentID", &args.DeploymentID); err != nil {
		return nil, err
	}
	return s.deploymentWrite(w, r, "Deployment.SetAllocHealth", &args, &args.WriteRequest)
}

func (s *httpAPI) deploymentWrite(w http.ResponseWriter, r *http.Request, method string, args any, wr *structs.WriteRequest) (any, error) {
	// Only the HTTP request says who is asking, never the body.
	*wr = structs.WriteRequest{}
	s.parseWrite(r, wr)
	var out structs.DeploymentUpdateResponse
	if err := s.call(r, method, args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}

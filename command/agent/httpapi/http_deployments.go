package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeDeployments(mux *http.ServeMux) {
	s.handle(mux, "/v1/deployments", s.deploymentsList, read...)
	s.handle(mux, "/v1/deployment/{id}", s.deploymentGet, read...)
	// Deployment watcher (issue 13): the deployment's allocs and the
	// writes that move a deployment on.
	s.handle(mux, "/v1/deployment/allocations/{id}", s.deploymentAllocations, read...)
	s.handle(mux, "/v1/deployment/promote/{id}", s.deploymentPromote, write...)
	s.handle(mux, "/v1/deployment/pause/{id}", s.deploymentPause, write...)
	s.handle(mux, "/v1/deployment/fail/{id}", s.deploymentFail, write...)
	s.handle(mux, "/v1/deployment/unblock/{id}", s.deploymentUnblock, write...)
	s.handle(mux, "/v1/deployment/allocation-health/{id}", s.deploymentAllocHealth, write...)
}

func (s *httpAPI) deploymentsList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	return serveList(s, w, r, &args.QueryOptions,
		func() ([]*structs.Deployment, structs.QueryMeta, error) { return s.allDeployments(r, &args) },
		func(d *structs.Deployment) string { return d.ID })
}

// deploymentGet accepts an ID prefix, as the CLI lets people type one.
func (s *httpAPI) deploymentGet(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	if len(id) < fullIDLen {
		var list structs.GenericRequest
		if err := s.parseQuery(r, &list.QueryOptions); err != nil {
			return nil, err
		}
		list.MinQueryIndex, list.MaxQueryTime, list.Prefix = 0, 0, id
		var out structs.DeploymentListResponse
		if err := s.call(r, "Deployment.List", &list, &out); err != nil {
			return nil, err
		}
		var err error
		if id, err = uniqueMatch("deployment", id, len(out.Deployments), func(i int) string { return out.Deployments[i].ID }); err != nil {
			return nil, err
		}
	}
	args := structs.DeploymentSpecificRequest{DeploymentID: id}
	var out structs.SingleDeploymentResponse
	if err := s.read(w, r, &args.QueryOptions, "Deployment.GetDeployment", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	if out.Deployment == nil {
		return nil, notFound("deployment %q not found", id)
	}
	return out.Deployment, nil
}

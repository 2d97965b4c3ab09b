package agent

import (
	"net/http"
)

func (s *httpAPI) routeDeployments(mux *http.ServeMux) {
	s.handle(mux, "/v1/deployments", s.deploymentsPending, read...)
	s.handle(mux, "/v1/deployment/{id}", s.deploymentsPending, read...)
}

// deploymentsPending answers 501 until the servers define the deployment
// RPCs' request and response types (structs.DeploymentListRequest,
// DeploymentListResponse, DeploymentSpecificRequest): sending a guessed
// type to an in-process endpoint is not safe. A job's deployments are
// available at /v1/job/:id/deployments.
func (s *httpAPI) deploymentsPending(w http.ResponseWriter, r *http.Request) (any, error) {
	return nil, &codedError{code: http.StatusNotImplemented,
		msg: r.URL.Path + " is not implemented yet (the Deployment RPCs are not defined); use /v1/job/<id>/deployments"}
}

package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

// Native service registrations (issue 13), in Nomad's shapes:
// GET /v1/services lists a namespace's services ({Namespace, Services:
// [{ServiceName, Tags}]}), GET /v1/service/:name their registrations (a
// blocking query like the other lists), DELETE /v1/service/:name/:id
// removes one registration.
func (s *httpAPI) routeServices(mux *http.ServeMux) {
	s.handle(mux, "/v1/services", s.servicesList, read...)
	s.handle(mux, "/v1/service/{name}", s.serviceGet, read...)
	s.handle(mux, "/v1/service/{name}/{id}", s.serviceDelete, http.MethodDelete)
}

func (s *httpAPI) servicesList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.ServiceRegistrationListRequest
	var out structs.ServiceRegistrationListResponse
	if err := s.read(w, r, &args.QueryOptions, "ServiceRegistration.List", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	return nonNil(out.Services), nil
}

func (s *httpAPI) serviceGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ServiceRegistrationByNameRequest{ServiceName: r.PathValue("name")}
	var out structs.ServiceRegistrationByNameResponse
	if err := s.read(w, r, &args.QueryOptions, "ServiceRegistration.GetService", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	return nonNil(out.Services), nil
}

func (s *httpAPI) serviceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ServiceRegistrationDeleteByIDRequest{ServiceName: r.PathValue("name"), ID: r.PathValue("id")}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.call(r, "ServiceRegistration.DeleteByID", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

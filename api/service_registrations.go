package api

import "errors"

// ServiceRegistration is one registered instance of a `provider = "nomad"`
// service, as GET /v1/service/:name answers it.
type ServiceRegistration struct {
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

// ServiceRegistrationListStub is the services of one namespace.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service: its name and its instances' tags.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// Services reads and deletes native service registrations.
type Services struct{ c *Client }

// Services returns the service registration endpoints.
func (c *Client) Services() *Services { return &Services{c: c} }

// List lists the services of the query's namespace ("*" for all).
func (s *Services) List(q *QueryOptions) ([]*ServiceRegistrationListStub, *QueryMeta, error) {
	var out []*ServiceRegistrationListStub
	qm, err := s.c.query("/v1/services", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Get returns the registrations of one service.
func (s *Services) Get(name string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	if name == "" {
		return nil, nil, errors.New("missing service name")
	}
	var out []*ServiceRegistration
	qm, err := s.c.query("/v1/service/"+escape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Delete removes one registration of a service.
func (s *Services) Delete(name, id string, w *WriteOptions) (*WriteMeta, error) {
	if name == "" || id == "" {
		return nil, errors.New("missing service name or registration ID")
	}
	return s.c.delete("/v1/service/"+escape(name)+"/"+escape(id), nil, w)
}

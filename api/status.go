package api

// Status is the /v1/status family: who leads the cluster.
type Status struct{ c *Client }

// Status returns the status endpoints.
func (c *Client) Status() *Status { return &Status{c: c} }

// Leader returns the RPC address of the cluster leader, or "" when there is
// none.
func (s *Status) Leader() (string, error) {
	var out string
	_, err := s.c.query("/v1/status/leader", &out, nil)
	return out, err
}

// Peers returns the RPC addresses of the raft peers.
func (s *Status) Peers() ([]string, error) {
	var out []string
	_, err := s.c.query("/v1/status/peers", &out, nil)
	return out, err
}

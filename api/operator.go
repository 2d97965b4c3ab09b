package api

// RaftConfiguration is the raft peer set (GET
// /v1/operator/raft/configuration).
type RaftConfiguration struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftServer is one raft peer.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// Operator is the /v1/operator family.
type Operator struct{ c *Client }

// Operator returns the operator endpoints.
func (c *Client) Operator() *Operator { return &Operator{c: c} }

// RaftGetConfiguration reads the raft peer set.
func (o *Operator) RaftGetConfiguration(q *QueryOptions) (*RaftConfiguration, error) {
	var out RaftConfiguration
	if _, err := o.c.query("/v1/operator/raft/configuration", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

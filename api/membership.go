package api

import (
	"errors"
	"net/url"
)

// joinResponse is the answer to /v1/agent/join.
type joinResponse struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// Join asks the agent's server to join the servers at addrs (their RPC
// addresses). It returns how many joined; the error names those that did
// not, even when some did.
func (a *Agent) Join(addrs ...string) (int, error) {
	v := url.Values{}
	for _, addr := range addrs {
		v.Add("address", addr)
	}
	var out joinResponse
	if _, err := a.c.put("/v1/agent/join?"+v.Encode(), nil, &out, nil); err != nil {
		return 0, err
	}
	if out.Error != "" {
		return out.NumJoined, errors.New(out.Error)
	}
	return out.NumJoined, nil
}

// RaftRemovePeerByAddress removes the server at address from the raft
// configuration.
func (o *Operator) RaftRemovePeerByAddress(address string, w *WriteOptions) error {
	_, err := o.c.delete("/v1/operator/raft/peer?"+url.Values{"address": {address}}.Encode(), nil, w)
	return err
}

// RaftRemovePeerByID removes the server with raft ID id from the raft
// configuration.
func (o *Operator) RaftRemovePeerByID(id string, w *WriteOptions) error {
	_, err := o.c.delete("/v1/operator/raft/peer?"+url.Values{"id": {id}}.Encode(), nil, w)
	return err
}

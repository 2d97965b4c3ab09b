package api

import (
	"encoding/json"
	"errors"
)

// AgentSelf answers GET /v1/agent/self: the agent's configuration, its
// gossip member entry and runtime stats. The JSON keys are lowercase, as in
// Nomad.
type AgentSelf struct {
	Config map[string]any               `json:"config"`
	Member AgentMember                  `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentMember is one server as the cluster membership sees it. Tags carry
// "region", "dc", "build", "port" (RPC), "raft_vsn" and friends.
type AgentMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// ServerMembers answers GET /v1/agent/members.
type ServerMembers struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*AgentMember
}

// AgentHealthResponse answers GET /v1/agent/health, per role the agent has.
type AgentHealthResponse struct {
	Client *AgentHealth `json:"client,omitempty"`
	Server *AgentHealth `json:"server,omitempty"`
}

// AgentHealth is one role's health.
type AgentHealth struct {
	Ok      bool   `json:"ok"`
	Message string `json:"message"`
}

// Agent is the /v1/agent family: the agent answering, not the cluster.
type Agent struct{ c *Client }

// Agent returns the agent endpoints.
func (c *Client) Agent() *Agent { return &Agent{c: c} }

// Self describes the agent answering.
func (a *Agent) Self() (*AgentSelf, error) {
	var out AgentSelf
	if _, err := a.c.query("/v1/agent/self", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members lists the servers the agent knows of.
func (a *Agent) Members() (*ServerMembers, error) {
	var out ServerMembers
	if _, err := a.c.query("/v1/agent/members", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health reports whether the agent's server and client are working. An
// unhealthy agent answers 500 with the same body; Health then returns the
// decoded body together with the error, so a caller can say which role is
// unhealthy and why.
func (a *Agent) Health() (*AgentHealthResponse, error) {
	var out AgentHealthResponse
	_, err := a.c.query("/v1/agent/health", &out, nil)
	if err != nil {
		var ure *UnexpectedResponseError
		if errors.As(err, &ure) && json.Unmarshal([]byte(ure.Body), &out) == nil {
			return &out, err
		}
		return nil, err
	}
	return &out, nil
}

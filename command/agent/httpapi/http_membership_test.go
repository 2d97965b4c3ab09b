package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-sched/drover/command/agent/config"
)

// TestJoinRefusedWithoutServer: a client-only agent has nothing to join.
func TestJoinRefusedWithoutServer(t *testing.T) {
	api := &httpAPI{info: func() AgentInfo { return AgentInfo{Config: config.Dev()} }}
	if _, err := api.agentJoin(nil, httptest.NewRequest("PUT", "/v1/agent/join?address=127.0.0.1:4647", nil)); err == nil ||
		errorStatus(err) != 400 || !strings.Contains(err.Error(), "runs no server") {
		t.Fatalf("client-only join: %v", err)
	}
}

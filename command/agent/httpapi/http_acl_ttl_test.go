package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/structs"
)

// A token's ExpirationTTL in nanoseconds went through a float64: a number
// past an int64 (or with a fraction) became some other duration, and
// 2^63-1 nanoseconds was refused as "negative". Such a number is now
// refused as what it is; a whole number of nanoseconds, or a duration
// string, is read exactly.
func TestACLTokenExpirationTTLIsReadExactly(t *testing.T) {
	var got time.Duration
	called := false
	s := &httpAPI{
		rpc: fakeRPC{"ACL.UpsertTokens": func(args, reply any) error {
			called = true
			tok := args.(*structs.ACLTokenUpsertRequest).Tokens[0]
			got = tok.ExpirationTTL
			reply.(*structs.ACLTokenUpsertResponse).Tokens = []*structs.ACLToken{tok}
			return nil
		}},
		logger: hclog.NewNullLogger(),
		info:   func() AgentInfo { return AgentInfo{Config: config.Dev()} },
	}
	h := s.handler()
	body := func(ttl string) []byte {
		return []byte(`{"Name": "t", "Type": "client", "Policies": ["p"], "ExpirationTTL": ` + ttl + `}`)
	}

	for _, tc := range []struct {
		ttl  string
		want time.Duration
	}{
		{"3600000000000", time.Hour},
		{"9007199254740993", 9007199254740993}, // 2^53+1: a float64 cannot hold it
		{`"90m"`, 90 * time.Minute},
	} {
		called = false
		if code, msg := serve(h, http.MethodPut, "/v1/acl/token", body(tc.ttl)); code != http.StatusOK || !called {
			t.Fatalf("ExpirationTTL %s: got %d %q", tc.ttl, code, msg)
		}
		if got != tc.want {
			t.Fatalf("ExpirationTTL %s reached the server as %d, want %d", tc.ttl, got, tc.want)
		}
	}

	for _, ttl := range []string{"9223372036854775808", "1e300", "1.5", "-1e300"} {
		called = false
		code, msg := serve(h, http.MethodPut, "/v1/acl/token", body(ttl))
		if code != http.StatusBadRequest || called {
			t.Fatalf("ExpirationTTL %s: got %d %q (server called: %v), want a 400", ttl, code, msg, called)
		}
		if !strings.Contains(msg, "ExpirationTTL") || !strings.Contains(msg, ttl) || strings.Contains(msg, "negative") {
			t.Fatalf("ExpirationTTL %s: the 400 does not say what is wrong with it: %q", ttl, msg)
		}
	}
}

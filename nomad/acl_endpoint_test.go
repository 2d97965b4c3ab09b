package nomad

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// aclServer starts a server with ACLs enabled and waits for it to lead.
func aclServer(t *testing.T, cb func(*Config)) *Server {
	t.Helper()
	s := testServer(t, func(c *Config) {
		c.ACLEnabled = true
		if cb != nil {
			cb(c)
		}
	})
	WaitForLeader(t, 10*time.Second, s)
	return s
}

func write(secret string) structs.WriteRequest {
	return structs.WriteRequest{Region: "global", AuthToken: secret}
}

func query(secret string) structs.QueryOptions {
	return structs.QueryOptions{Region: "global", AuthToken: secret}
}

// bootstrapACL bootstraps and returns the management token, with secret.
func bootstrapACL(t *testing.T, s *Server) *structs.ACLToken {
	t.Helper()
	var out structs.ACLTokenUpsertResponse
	if err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &out); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	if len(out.Tokens) != 1 || out.Tokens[0].SecretID == "" {
		t.Fatalf("bootstrap answered %+v", out.Tokens)
	}
	return out.Tokens[0]
}

func upsertPolicy(t *testing.T, s *Server, secret, name, rules string) {
	t.Helper()
	req := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: name, Rules: rules}}, WriteRequest: write(secret)}
	if err := s.RPC("ACL.UpsertPolicies", req, &structs.GenericResponse{}); err != nil {
		t.Fatalf("upserting policy %s: %v", name, err)
	}
}

func createToken(t *testing.T, s *Server, secret string, tok *structs.ACLToken) *structs.ACLToken {
	t.Helper()
	var out structs.ACLTokenUpsertResponse
	if err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tok}, WriteRequest: write(secret)}, &out); err != nil {
		t.Fatalf("creating token: %v", err)
	}
	return out.Tokens[0]
}

func requireErr(t *testing.T, err, want error) {
	t.Helper()
	if err == nil || !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}

func TestACLEndpointsAnswerDisabledWhileACLsAreOff(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 10*time.Second, s)
	calls := map[string]struct{ args, reply any }{
		"ACL.Bootstrap":      {&structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{}},
		"ACL.UpsertPolicies": {&structs.ACLPolicyUpsertRequest{WriteRequest: write("")}, &structs.GenericResponse{}},
		"ACL.DeletePolicies": {&structs.ACLPolicyDeleteRequest{WriteRequest: write("")}, &structs.GenericResponse{}},
		"ACL.ListPolicies":   {&structs.ACLPolicyListRequest{QueryOptions: query("")}, &structs.ACLPolicyListResponse{}},
		"ACL.GetPolicy":      {&structs.ACLPolicySpecificRequest{QueryOptions: query("")}, &structs.SingleACLPolicyResponse{}},
		"ACL.UpsertTokens":   {&structs.ACLTokenUpsertRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{}},
		"ACL.DeleteTokens":   {&structs.ACLTokenDeleteRequest{WriteRequest: write("")}, &structs.GenericResponse{}},
		"ACL.ListTokens":     {&structs.ACLTokenListRequest{QueryOptions: query("")}, &structs.ACLTokenListResponse{}},
		"ACL.GetToken":       {&structs.ACLTokenSpecificRequest{QueryOptions: query("")}, &structs.SingleACLTokenResponse{}},
		"ACL.GetTokenSelf":   {&structs.GenericRequest{QueryOptions: query("")}, &structs.SingleACLTokenResponse{}},
		"ACL.ResolveToken":   {&structs.ResolveACLTokenRequest{QueryOptions: query("")}, &structs.ResolveACLTokenResponse{}},
	}
	for method, c := range calls {
		if err := s.RPC(method, c.args, c.reply); err == nil || err.Error() != "ACL support disabled" {
			t.Errorf("%s: got %v, want Nomad's \"ACL support disabled\"", method, err)
		}
	}
	if a, err := s.ResolveToken("anything"); a != nil || err != nil {
		t.Fatalf("ResolveToken with ACLs off = %v, %v; want nil, nil (allow everything)", a, err)
	}
}

func TestACLBootstrapOnceThenOnlyWithTheResetFile(t *testing.T) {
	s := aclServer(t, nil)
	boot := bootstrapACL(t, s)
	if boot.Type != structs.ACLManagementToken || boot.Name != "Bootstrap Token" || !boot.Global || boot.CreateIndex == 0 {
		t.Fatalf("bootstrap token %+v", boot)
	}
	if a, err := s.ResolveToken(boot.SecretID); err != nil || !a.IsManagement() {
		t.Fatalf("the bootstrap secret resolves to %v, %v", a, err)
	}

	err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{})
	resetFile := filepath.Join(s.config.DataDir, "acl-bootstrap-reset")
	wantText := "ACL bootstrap already done (reset index: " + itoa(boot.CreateIndex) + ")"
	if err == nil || !strings.Contains(err.Error(), wantText) || !strings.Contains(err.Error(), resetFile) {
		t.Fatalf("second bootstrap: %v; want %q and the file to write", err, wantText)
	}

	if err := os.WriteFile(resetFile, []byte("12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{})
	if err == nil || !strings.Contains(err.Error(), "Invalid bootstrap reset index (specified 12345, reset index: "+itoa(boot.CreateIndex)+")") {
		t.Fatalf("bootstrap with a wrong reset index: %v", err)
	}

	if err := os.WriteFile(resetFile, []byte(itoa(boot.CreateIndex)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	again := bootstrapACL(t, s)
	if again.AccessorID == boot.AccessorID || again.SecretID == boot.SecretID {
		t.Fatal("a reset bootstrap must make a new token")
	}
	// The file still names the old index: it does not allow a third.
	err = s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{})
	if err == nil || !strings.Contains(err.Error(), "reset index: "+itoa(again.CreateIndex)) {
		t.Fatalf("third bootstrap: %v", err)
	}
}

func TestACLBootstrapWithACallerSecret(t *testing.T) {
	s := aclServer(t, nil)
	err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: "not-a-uuid", WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{})
	if err == nil || !strings.Contains(err.Error(), "must be a UUID") {
		t.Fatalf("a non-UUID secret: %v", err)
	}
	if idx, _ := s.State().ACLBootstrapIndex(); idx != 0 {
		t.Fatal("a refused bootstrap must change nothing")
	}
	const secret = "3b3a80cd-1c8b-6fe6-7db1-5f01f6c0d0d7"
	var out structs.ACLTokenUpsertResponse
	if err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: secret, WriteRequest: write("")}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Tokens[0].SecretID != secret {
		t.Fatalf("secret = %q", out.Tokens[0].SecretID)
	}
	if a, err := s.ResolveToken(secret); err != nil || !a.IsManagement() {
		t.Fatalf("the caller's secret does not resolve: %v", err)
	}
}

func TestACLPolicyEndpoints(t *testing.T) {
	s := aclServer(t, nil)
	mgmt := bootstrapACL(t, s).SecretID
	upsertPolicy(t, s, mgmt, "readers", `namespace "default" { policy = "read" }`)
	upsertPolicy(t, s, mgmt, "ops", `node { policy = "write" }`)
	upsertPolicy(t, s, mgmt, "anonymous", `agent { policy = "read" }`)
	reader := createToken(t, s, mgmt, &structs.ACLToken{Name: "r", Type: structs.ACLClientToken, Policies: []string{"readers"}}).SecretID

	t.Run("a bad policy is refused with its line and changes nothing", func(t *testing.T) {
		req := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
			{Name: "fine", Rules: `node { policy = "read" }`},
			{Name: "broken", Rules: "namespace \"x\" {\n  policy = \"wrte\"\n}"},
		}, WriteRequest: write(mgmt)}
		err := s.RPC("ACL.UpsertPolicies", req, &structs.GenericResponse{})
		if err == nil || !strings.Contains(err.Error(), `policy "broken"`) || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("got %v", err)
		}
		if p, _ := s.State().ACLPolicyByName(nil, "fine"); p != nil {
			t.Fatal("one bad policy must keep the others of the request out too")
		}
	})
	t.Run("a bad name is refused", func(t *testing.T) {
		req := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "no spaces", Rules: `node { policy = "read" }`}}, WriteRequest: write(mgmt)}
		if err := s.RPC("ACL.UpsertPolicies", req, &structs.GenericResponse{}); err == nil || !strings.Contains(err.Error(), "letters, digits and '-'") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("only a management token writes policies", func(t *testing.T) {
		for _, secret := range []string{reader, ""} {
			req := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "x", Rules: `node { policy = "read" }`}}, WriteRequest: write(secret)}
			requireErr(t, s.RPC("ACL.UpsertPolicies", req, &structs.GenericResponse{}), structs.ErrPermissionDenied)
			requireErr(t, s.RPC("ACL.DeletePolicies", &structs.ACLPolicyDeleteRequest{Names: []string{"readers"}, WriteRequest: write(secret)}, &structs.GenericResponse{}), structs.ErrPermissionDenied)
		}
		req := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "x", Rules: `node { policy = "read" }`}}, WriteRequest: write("11111111-2222-3333-4444-555555555555")}
		requireErr(t, s.RPC("ACL.UpsertPolicies", req, &structs.GenericResponse{}), structs.ErrTokenNotFound)
	})
	t.Run("management lists every policy, a client token its own, no token the anonymous one", func(t *testing.T) {
		for _, c := range []struct {
			secret string
			want   string
		}{{mgmt, "anonymous,ops,readers"}, {reader, "readers"}, {"", "anonymous"}} {
			var out structs.ACLPolicyListResponse
			if err := s.RPC("ACL.ListPolicies", &structs.ACLPolicyListRequest{QueryOptions: query(c.secret)}, &out); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range out.Policies {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != c.want {
				t.Errorf("listed %v, want %s", names, c.want)
			}
		}
	})
	t.Run("a client token reads its policies and the anonymous one only", func(t *testing.T) {
		get := func(secret, name string) (*structs.ACLPolicy, error) {
			var out structs.SingleACLPolicyResponse
			err := s.RPC("ACL.GetPolicy", &structs.ACLPolicySpecificRequest{Name: name, QueryOptions: query(secret)}, &out)
			return out.Policy, err
		}
		if p, err := get(reader, "readers"); err != nil || p == nil || !strings.Contains(p.Rules, `policy = "read"`) {
			t.Fatalf("own policy: %+v %v", p, err)
		}
		if p, err := get(reader, "anonymous"); err != nil || p == nil {
			t.Fatalf("anonymous policy: %+v %v", p, err)
		}
		_, err := get(reader, "ops")
		requireErr(t, err, structs.ErrPermissionDenied)
		if p, err := get(mgmt, "missing"); err != nil || p != nil {
			t.Fatalf("a missing policy for management = %+v %v", p, err)
		}
	})
	t.Run("deleting a policy that does not exist deletes nothing", func(t *testing.T) {
		err := s.RPC("ACL.DeletePolicies", &structs.ACLPolicyDeleteRequest{Names: []string{"ops", "ghost"}, WriteRequest: write(mgmt)}, &structs.GenericResponse{})
		if err == nil || !strings.Contains(err.Error(), "ghost") {
			t.Fatalf("got %v", err)
		}
		if p, _ := s.State().ACLPolicyByName(nil, "ops"); p == nil {
			t.Fatal("ops must still exist")
		}
		if err := s.RPC("ACL.DeletePolicies", &structs.ACLPolicyDeleteRequest{Names: []string{"ops"}, WriteRequest: write(mgmt)}, &structs.GenericResponse{}); err != nil {
			t.Fatal(err)
		}
		if p, _ := s.State().ACLPolicyByName(nil, "ops"); p != nil {
			t.Fatal("ops must be gone")
		}
	})
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

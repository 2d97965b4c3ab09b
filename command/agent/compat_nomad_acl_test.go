package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
)

// aclAgent starts a server-only test agent with ACLs enabled.
func aclAgent(t *testing.T) *TestAgent {
	t.Helper()
	return NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.ACL.Enabled = true
	})
}

func nomadClientWithToken(t *testing.T, a *TestAgent, secret string) *nomadapi.Client {
	t.Helper()
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL, SecretID: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// requireAPIError checks that a call through Nomad's client failed with
// the status and text Nomad would answer.
func requireAPIError(t *testing.T, err error, code int, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %d %q, got success", code, text)
	}
	var ue nomadapi.UnexpectedResponseError
	if ok := asUnexpected(err, &ue); !ok || ue.StatusCode() != code || !strings.Contains(ue.Body(), text) {
		t.Fatalf("want %d %q, got %v", code, text, err)
	}
}

func asUnexpected(err error, out *nomadapi.UnexpectedResponseError) bool {
	for e := err; e != nil; {
		if ue, ok := e.(nomadapi.UnexpectedResponseError); ok {
			*out = ue
			return true
		}
		if ue, ok := e.(*nomadapi.UnexpectedResponseError); ok {
			*out = *ue
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// Nomad's own Go client drives the whole ACL API: bootstrap, policies,
// tokens, self, and every refusal, with Nomad's status codes and texts.
func TestNomadClientACLs(t *testing.T) {
	a := aclAgent(t)
	anon := nomadClient(t, a)

	boot, wm, err := anon.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	if boot.SecretID == "" || boot.AccessorID == "" || boot.Type != "management" || boot.Name != "Bootstrap Token" ||
		!boot.Global || boot.CreateTime.IsZero() || boot.CreateIndex == 0 || wm.LastIndex != boot.CreateIndex {
		t.Fatalf("bootstrap token %+v (index %d)", boot, wm.LastIndex)
	}
	_, _, err = anon.ACLTokens().Bootstrap(nil)
	requireAPIError(t, err, http.StatusBadRequest, "ACL bootstrap already done (reset index: ")

	mgmt := nomadClientWithToken(t, a, boot.SecretID)
	rules := "namespace \"default\" {\n  policy = \"read\"\n}\n"
	if _, err := mgmt.ACLPolicies().Upsert(&nomadapi.ACLPolicy{Name: "readers", Description: "read default", Rules: rules}, nil); err != nil {
		t.Fatalf("policy upsert: %v", err)
	}
	if _, err := mgmt.ACLPolicies().Upsert(&nomadapi.ACLPolicy{Name: "ops", Rules: `node { policy = "write" }`}, nil); err != nil {
		t.Fatalf("policy upsert: %v", err)
	}
	_, err = mgmt.ACLPolicies().Upsert(&nomadapi.ACLPolicy{Name: "bad", Rules: "namespace \"x\" {\n policy = \"rw\"\n}"}, nil)
	requireAPIError(t, err, http.StatusBadRequest, `line 2: namespace "x": policy "rw" is not valid`)

	policies, qm, err := mgmt.ACLPolicies().List(nil)
	if err != nil || len(policies) != 2 || policies[0].Name != "ops" || policies[1].Name != "readers" || qm.LastIndex == 0 {
		t.Fatalf("policy list: %v %+v", err, policies)
	}
	p, _, err := mgmt.ACLPolicies().Info("readers", nil)
	if err != nil || p.Rules != rules || p.Description != "read default" || p.CreateIndex == 0 {
		t.Fatalf("policy info: %v %+v", err, p)
	}
	_, _, err = mgmt.ACLPolicies().Info("nope", nil)
	requireAPIError(t, err, http.StatusNotFound, "ACL policy not found")

	created, _, err := mgmt.ACLTokens().Create(&nomadapi.ACLToken{Name: "ci", Type: "client", Policies: []string{"readers"}, ExpirationTTL: time.Hour}, nil)
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	if created.SecretID == "" || created.ExpirationTime == nil || created.ExpirationTime.Sub(created.CreateTime) != time.Hour {
		t.Fatalf("created token %+v", created)
	}
	_, _, err = mgmt.ACLTokens().Create(&nomadapi.ACLToken{Type: "client", Policies: []string{"missing"}}, nil)
	requireAPIError(t, err, http.StatusBadRequest, "no ACL policy named missing exists")

	client := nomadClientWithToken(t, a, created.SecretID)
	self, _, err := client.ACLTokens().Self(nil)
	if err != nil || self.AccessorID != created.AccessorID || self.SecretID != "" || self.Name != "ci" {
		t.Fatalf("self: %v %+v", err, self)
	}
	info, _, err := mgmt.ACLTokens().Info(created.AccessorID, nil)
	if err != nil || info.AccessorID != created.AccessorID || info.SecretID != "" || info.Policies[0] != "readers" {
		t.Fatalf("info: %v %+v", err, info)
	}
	tokens, _, err := mgmt.ACLTokens().List(nil)
	if err != nil || len(tokens) != 2 {
		t.Fatalf("token list: %v %d", err, len(tokens))
	}

	info.Name = "ci-renamed"
	updated, _, err := mgmt.ACLTokens().Update(info, nil)
	if err != nil || updated.Name != "ci-renamed" || updated.CreateIndex != created.CreateIndex {
		t.Fatalf("update: %v %+v", err, updated)
	}
	if self, _, err := client.ACLTokens().Self(nil); err != nil || self.Name != "ci-renamed" {
		t.Fatalf("the secret must still work after an update: %v %+v", err, self)
	}

	t.Run("a client token sees only its own policies and no tokens", func(t *testing.T) {
		mine, _, err := client.ACLPolicies().List(nil)
		if err != nil || len(mine) != 1 || mine[0].Name != "readers" {
			t.Fatalf("client policy list: %v %+v", err, mine)
		}
		_, _, err = client.ACLPolicies().Info("ops", nil)
		requireAPIError(t, err, http.StatusForbidden, "Permission denied")
		_, _, err = client.ACLTokens().List(nil)
		requireAPIError(t, err, http.StatusForbidden, "Permission denied")
		_, err = client.ACLPolicies().Upsert(&nomadapi.ACLPolicy{Name: "mine", Rules: `node { policy = "read" }`}, nil)
		requireAPIError(t, err, http.StatusForbidden, "Permission denied")
		_, _, err = client.ACLTokens().Info(boot.AccessorID, nil)
		requireAPIError(t, err, http.StatusForbidden, "Permission denied")
	})
	t.Run("an unknown token is refused with Nomad's text", func(t *testing.T) {
		stranger := nomadClientWithToken(t, a, "7e5c3b3a-0000-4000-8000-000000000000")
		_, _, err := stranger.ACLTokens().Self(nil)
		requireAPIError(t, err, http.StatusForbidden, "ACL token not found")
	})
	t.Run("deleting", func(t *testing.T) {
		if _, err := mgmt.ACLTokens().Delete(created.AccessorID, nil); err != nil {
			t.Fatalf("token delete: %v", err)
		}
		_, _, err := client.ACLTokens().Self(nil)
		requireAPIError(t, err, http.StatusForbidden, "ACL token not found")
		_, _, err = mgmt.ACLTokens().Info(created.AccessorID, nil)
		requireAPIError(t, err, http.StatusNotFound, "ACL token not found")
		if _, err := mgmt.ACLPolicies().Delete("ops", nil); err != nil {
			t.Fatalf("policy delete: %v", err)
		}
		if _, _, err := mgmt.ACLPolicies().Info("ops", nil); err == nil {
			t.Fatal("a deleted policy is still there")
		}
	})
}

// The token may come in any of the three places Nomad reads it from.
func TestACLTokenFromHeaderBearerOrQuery(t *testing.T) {
	a := aclAgent(t)
	boot, _, err := nomadClient(t, a).ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, set := range map[string]func(r *http.Request){
		"X-Nomad-Token":         func(r *http.Request) { r.Header.Set("X-Nomad-Token", boot.SecretID) },
		"Authorization: Bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+boot.SecretID) },
		"lower-case bearer":     func(r *http.Request) { r.Header.Set("Authorization", "bearer "+boot.SecretID) },
		"?token=":               func(r *http.Request) { r.URL.RawQuery = "token=" + boot.SecretID },
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, a.URL+"/v1/acl/token/self", nil)
			set(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var tok map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", resp.StatusCode, err)
			}
			if tok["AccessorID"] != boot.AccessorID || tok["SecretID"] != "" {
				t.Fatalf("self = %v", tok)
			}
			if _, leaked := tok["SecretHash"]; leaked {
				t.Fatal("the secret's hash must not be in the HTTP answer")
			}
		})
	}
	t.Run("no token is the anonymous token", func(t *testing.T) {
		var tok map[string]any
		callOK(t, http.MethodGet, a.URL+"/v1/acl/token/self", nil, &tok)
		if tok["AccessorID"] != "anonymous" || tok["Name"] != "Anonymous Token" {
			t.Fatalf("self = %v", tok)
		}
	})
}

func TestACLEndpointsWhileACLsAreDisabled(t *testing.T) {
	a := serverAgent(t)
	_, _, err := nomadClient(t, a).ACLTokens().Bootstrap(nil)
	requireAPIError(t, err, http.StatusBadRequest, "ACL support disabled")
	resp, body := call(t, http.MethodGet, a.URL+"/v1/acl/policies", nil)
	requireStatus(t, resp, body, http.StatusBadRequest, "ACL support disabled")
}

func TestACLHTTPBodiesAreChecked(t *testing.T) {
	a := aclAgent(t)
	boot, _, err := nomadClient(t, a).ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, body any) (*http.Response, []byte) {
		return call(t, method, a.URL+path+"?token="+boot.SecretID, body)
	}
	resp, body := do(http.MethodPut, "/v1/acl/policy/one", map[string]string{"Name": "two", "Rules": `node { policy = "read" }`})
	requireStatus(t, resp, body, http.StatusBadRequest, "Policy name does not match request path")
	resp, body = do(http.MethodPost, "/v1/acl/token", map[string]any{"Type": "management", "Roles": []any{map[string]string{"Name": "r"}}})
	requireStatus(t, resp, body, http.StatusBadRequest, "no ACL roles")
	resp, body = do(http.MethodPost, "/v1/acl/token", map[string]any{"Type": "management", "SecretID": "mine"})
	requireStatus(t, resp, body, http.StatusBadRequest, "leave SecretID empty")
	resp, body = do(http.MethodPost, "/v1/acl/token", map[string]any{"Type": "management", "ExpirationTTL": "soon"})
	requireStatus(t, resp, body, http.StatusBadRequest, "ExpirationTTL")
	resp, body = do(http.MethodPost, "/v1/acl/token/"+boot.AccessorID, map[string]any{"AccessorID": "other", "Type": "management"})
	requireStatus(t, resp, body, http.StatusBadRequest, "does not match path")

	// A TTL in nanoseconds works as well as Nomad's duration string.
	var tok map[string]any
	resp = callOK(t, http.MethodPost, a.URL+"/v1/acl/token?token="+boot.SecretID,
		map[string]any{"Type": "management", "ExpirationTTL": int64(2 * time.Hour)}, &tok)
	if tok["SecretID"] == "" || tok["ExpirationTime"] == nil || index(t, resp) == 0 {
		t.Fatalf("created %v", tok)
	}
	resp, body = do(http.MethodDelete, "/v1/acl/token/not-a-token", nil)
	requireStatus(t, resp, body, http.StatusBadRequest, "Cannot delete nonexistent tokens: not-a-token")
}

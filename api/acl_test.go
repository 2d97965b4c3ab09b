package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestACLTokensSpeakNomadsShapes(t *testing.T) {
	f, c := newFakeAgent(t)
	tokenJSON := `{"AccessorID":"acc","SecretID":"sec","Name":"ci","Type":"client","Policies":["readers"],"Global":false,
		"CreateTime":"2026-01-02T03:04:05Z","ExpirationTime":"2026-01-02T04:04:05Z","CreateIndex":7,"ModifyIndex":7}`
	f.on("PUT /v1/acl/token", reply{Body: tokenJSON, Headers: map[string]string{"X-Nomad-Index": "7"}})

	tok, wm, err := c.ACLTokens().Create(&ACLToken{Name: "ci", Type: "client", Policies: []string{"readers"}, ExpirationTTL: time.Hour},
		&WriteOptions{AuthToken: "mgmt-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.SecretID != "sec" || tok.ExpirationTime == nil || tok.ExpirationTime.Sub(tok.CreateTime) != time.Hour || wm.LastIndex != 7 {
		t.Fatalf("decoded %+v %+v", tok, wm)
	}
	got := f.last()
	if got.Header.Get("X-Nomad-Token") != "mgmt-secret" {
		t.Fatalf("the token must travel as X-Nomad-Token, headers %v", got.Header)
	}
	if err := subsetJSON(got.Body, `{"Name":"ci","Type":"client","Policies":["readers"],"ExpirationTTL":"1h0m0s"}`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ACLTokens().Create(&ACLToken{AccessorID: "x"}, nil); err == nil {
		t.Fatal("Create must refuse an accessor ID, as Nomad's client does")
	}

	f.on("PUT /v1/acl/bootstrap", reply{Body: tokenJSON})
	if _, _, err := c.ACLTokens().Bootstrap(nil); err != nil || f.last().Body != "" {
		t.Fatalf("a plain bootstrap sends no body: %v %q", err, f.last().Body)
	}
	if _, _, err := c.ACLTokens().BootstrapOpts("3b3a80cd-1c8b-6fe6-7db1-5f01f6c0d0d7", nil); err != nil {
		t.Fatal(err)
	}
	if err := subsetJSON(f.last().Body, `{"BootstrapSecret":"3b3a80cd-1c8b-6fe6-7db1-5f01f6c0d0d7"}`); err != nil {
		t.Fatal(err)
	}

	f.on("GET /v1/acl/tokens", reply{Body: `[{"AccessorID":"acc","Name":"ci","Type":"client","Policies":["readers"],"CreateIndex":7,"ModifyIndex":7}]`})
	list, _, err := c.ACLTokens().List(nil)
	if err != nil || len(list) != 1 || list[0].AccessorID != "acc" {
		t.Fatalf("list: %v %+v", err, list)
	}
	f.on("GET /v1/acl/token/self", reply{Body: tokenJSON})
	if self, _, err := c.ACLTokens().Self(nil); err != nil || self.AccessorID != "acc" {
		t.Fatalf("self: %v", err)
	}
	f.on("PUT /v1/acl/token/acc", reply{Body: tokenJSON})
	if _, _, err := c.ACLTokens().Update(&ACLToken{AccessorID: "acc", Type: "client", Policies: []string{"readers"}}, nil); err != nil {
		t.Fatal(err)
	}
	f.on("DELETE /v1/acl/token/acc", reply{})
	if _, err := c.ACLTokens().Delete("acc", nil); err != nil || f.last().Method != "DELETE" {
		t.Fatalf("delete: %v", err)
	}
}

func TestACLPoliciesSpeakNomadsShapes(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("PUT /v1/acl/policy/readers", reply{Headers: map[string]string{"X-Nomad-Index": "5"}})
	wm, err := c.ACLPolicies().Upsert(&ACLPolicy{Name: "readers", Description: "d", Rules: `node { policy = "read" }`}, nil)
	if err != nil || wm.LastIndex != 5 {
		t.Fatalf("upsert: %v %+v", err, wm)
	}
	if err := subsetJSON(f.last().Body, `{"Name":"readers","Description":"d","Rules":"node { policy = \"read\" }"}`); err != nil {
		t.Fatal(err)
	}
	f.on("GET /v1/acl/policy/readers", reply{Body: `{"Name":"readers","Rules":"r","CreateIndex":5,"ModifyIndex":6}`})
	p, _, err := c.ACLPolicies().Info("readers", nil)
	if err != nil || p.Rules != "r" || p.ModifyIndex != 6 {
		t.Fatalf("info: %v %+v", err, p)
	}
	f.on("GET /v1/acl/policies", reply{Body: `[{"Name":"readers","Description":"d"}]`})
	if l, _, err := c.ACLPolicies().List(nil); err != nil || len(l) != 1 {
		t.Fatalf("list: %v", err)
	}
	f.on("DELETE /v1/acl/policy/readers", reply{})
	if _, err := c.ACLPolicies().Delete("readers", nil); err != nil {
		t.Fatal(err)
	}
}

func TestTheClientSendsItsConfiguredToken(t *testing.T) {
	f, _ := newFakeAgent(t)
	c, err := NewClient(&Config{Address: f.srv.URL, Getenv: func(k string) string {
		if k == EnvToken {
			return "from-env"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.on("GET /v1/acl/token/self", reply{Body: `{}`})
	if _, _, err := c.ACLTokens().Self(nil); err != nil {
		t.Fatal(err)
	}
	if h := f.last().Header.Get("X-Nomad-Token"); h != "from-env" {
		t.Fatalf("X-Nomad-Token = %q", h)
	}
}

func TestACLTokenExpirationTTLIsDecodedExactly(t *testing.T) {
	var tok ACLToken
	if err := json.Unmarshal([]byte(`{"ExpirationTTL": 9007199254740993}`), &tok); err != nil {
		t.Fatal(err)
	}
	if tok.ExpirationTTL != 9007199254740993 {
		t.Fatalf("ExpirationTTL 2^53+1 decoded as %d", tok.ExpirationTTL)
	}
	for _, ttl := range []string{"9223372036854775808", "1e300", "1.5"} {
		if err := json.Unmarshal([]byte(`{"ExpirationTTL": `+ttl+`}`), &tok); err == nil || !strings.Contains(err.Error(), ttl) {
			t.Fatalf("ExpirationTTL %s: %v, want an error naming it", ttl, err)
		}
	}
}

package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestACLBlock(t *testing.T) {
	src := `acl {
  enabled                  = true
  token_ttl                = "45s"
  policy_ttl               = "1m"
  token_min_expiration_ttl = "2m"
  token_max_expiration_ttl = "12h"
  role_ttl                 = "30s"
}
`
	c, warnings, err := Parse("agent.hcl", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "role_ttl") || !strings.Contains(warnings[0], "no ACL roles") {
		t.Fatalf("warnings = %q; want one about role_ttl", warnings)
	}
	want := ACLConfig{Enabled: true, TokenTTL: 45 * time.Second, PolicyTTL: time.Minute,
		TokenMinExpirationTTL: 2 * time.Minute, TokenMaxExpirationTTL: 12 * time.Hour}
	if diff := cmp.Diff(want, c.ACL); diff != "" {
		t.Fatalf("acl (-want +got):\n%s", diff)
	}

	merged := Dev().Merge(c)
	s, err := merged.ForServer(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.ACLEnabled || s.ACLTokenMinExpirationTTL != 2*time.Minute || s.ACLTokenMaxExpirationTTL != 12*time.Hour {
		t.Fatalf("server config: enabled %v, TTLs %s..%s", s.ACLEnabled, s.ACLTokenMinExpirationTTL, s.ACLTokenMaxExpirationTTL)
	}
	cc := merged.ForClient(t.TempDir(), []string{"127.0.0.1:4647"}, "127.0.0.1:4646", nil)
	if !cc.ACLEnabled || cc.ACLTokenTTL != 45*time.Second || cc.ACLPolicyTTL != time.Minute {
		t.Fatalf("client config: enabled %v, token ttl %s, policy ttl %s", cc.ACLEnabled, cc.ACLTokenTTL, cc.ACLPolicyTTL)
	}
	if cp := merged.Copy(); cp.ACL != merged.ACL {
		t.Fatal("Copy must keep the acl block")
	}
}

func TestACLBlockDefaultsAndMerging(t *testing.T) {
	s, err := Dev().ForServer(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ACLEnabled || s.ACLTokenMinExpirationTTL != time.Minute || s.ACLTokenMaxExpirationTTL != 24*time.Hour {
		t.Fatalf("defaults: enabled %v, TTLs %s..%s", s.ACLEnabled, s.ACLTokenMinExpirationTTL, s.ACLTokenMaxExpirationTTL)
	}
	on, _, err := Parse("a.hcl", []byte("acl {\n  enabled = true\n  token_ttl = \"10s\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	later, _, err := Parse("b.hcl", []byte("acl {\n  enabled = false\n  policy_ttl = \"20s\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := Default().Merge(on).Merge(later)
	if !m.ACL.Enabled || m.ACL.TokenTTL != 10*time.Second || m.ACL.PolicyTTL != 20*time.Second {
		t.Fatalf("merged acl = %+v: later files add, and cannot switch enabled off", m.ACL)
	}
}

func TestACLBlockRefusesBadValues(t *testing.T) {
	_, _, err := Parse("agent.hcl", []byte("acl {\n  enabled = \"yes please\"\n  token_ttl = \"soon\"\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "acl.enabled") || !strings.Contains(err.Error(), "acl.token_ttl") {
		t.Fatalf("got %v", err)
	}
}

func TestACLEnabledFlag(t *testing.T) {
	args, err := ParseArgs([]string{"-dev", "-acl-enabled"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := Build(args)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ACL.Enabled {
		t.Fatal("-acl-enabled must turn ACLs on")
	}
}

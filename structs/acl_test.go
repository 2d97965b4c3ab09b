package structs

import (
	"strings"
	"testing"
	"time"
)

func TestACLTokenValidate(t *testing.T) {
	exp := time.Unix(1800000000, 0)
	cases := []struct {
		name  string
		token ACLToken
		want  string // "" means valid
	}{
		{"a client token with a policy is valid", ACLToken{Type: ACLClientToken, Policies: []string{"readers"}}, ""},
		{"a management token without policies is valid", ACLToken{Type: ACLManagementToken}, ""},
		{"a client token needs a policy", ACLToken{Type: ACLClientToken}, "needs at least one policy"},
		{"a management token takes no policies", ACLToken{Type: ACLManagementToken, Policies: []string{"p"}}, "takes no policies"},
		{"an unknown type names the two allowed", ACLToken{Type: "admin"}, `type "admin" is not valid: use "client" or "management"`},
		{"a long name is refused", ACLToken{Type: ACLManagementToken, Name: strings.Repeat("n", 257)}, "at most 256"},
		{"a policy name with a space is refused", ACLToken{Type: ACLClientToken, Policies: []string{"two words"}}, `policy name "two words" is not valid`},
		{"a TTL and an expiration time together are refused", ACLToken{Type: ACLManagementToken, ExpirationTTL: time.Hour, ExpirationTime: &exp}, "not both"},
		{"too many policies are refused", ACLToken{Type: ACLClientToken, Policies: manyNames(65)}, "at most 64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.token.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestACLTokenValidateSortsAndDeduplicatesPolicies(t *testing.T) {
	tok := ACLToken{Type: ACLClientToken, Policies: []string{"b", "a", "b"}}
	if err := tok.Validate(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(tok.Policies, ",") != "a,b" {
		t.Fatalf("policies = %v", tok.Policies)
	}
}

func TestACLPolicyValidate(t *testing.T) {
	if err := (&ACLPolicy{Name: "ok-1", Rules: "x"}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := (&ACLPolicy{Name: "bad_name", Description: strings.Repeat("d", 300)}).Validate()
	for _, want := range []string{`policy name "bad_name" is not valid`, "description is 300 bytes", "rules are empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v should mention %q", err, want)
		}
	}
}

func TestACLTokenExpiry(t *testing.T) {
	exp := time.Unix(100, 0)
	tok := &ACLToken{ExpirationTime: &exp}
	if tok.IsExpired(time.Unix(99, 0)) || !tok.IsExpired(time.Unix(100, 0)) {
		t.Fatal("a token expires at its expiration time, not before")
	}
	if (&ACLToken{}).IsExpired(time.Unix(1<<40, 0)) {
		t.Fatal("a token without an expiration never expires")
	}
}

func manyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "p" + itoa(i)
	}
	return out
}

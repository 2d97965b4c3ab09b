package nomad

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkResolveTokenCached measures what every request will pay once
// enforcement is on: resolving a client token whose ACL is already
// compiled (hash the secret, look the token and its policies up, hit the
// cache).
func BenchmarkResolveTokenCached(b *testing.B) {
	s := testServer(b, func(c *Config) { c.ACLEnabled = true })
	WaitForLeader(b, 10e9, s)
	var boot structs.ACLTokenUpsertResponse
	if err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &boot); err != nil {
		b.Fatal(err)
	}
	mgmt := boot.Tokens[0].SecretID
	names := []string{"p1", "p2", "p3"}
	for _, n := range names {
		req := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: n,
			Rules: `namespace "` + n + `" { policy = "write" }` + "\nnode { policy = \"read\" }"}}, WriteRequest: write(mgmt)}
		if err := s.RPC("ACL.UpsertPolicies", req, &structs.GenericResponse{}); err != nil {
			b.Fatal(err)
		}
	}
	var out structs.ACLTokenUpsertResponse
	req := &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{Type: structs.ACLClientToken, Policies: names}}, WriteRequest: write(mgmt)}
	if err := s.RPC("ACL.UpsertTokens", req, &out); err != nil {
		b.Fatal(err)
	}
	secret := out.Tokens[0].SecretID
	if _, err := s.ResolveToken(secret); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, err := s.ResolveToken(secret)
		if err != nil || !a.AllowNamespaceOperation("p2", "submit-job") {
			b.Fatal("resolve failed")
		}
	}
}

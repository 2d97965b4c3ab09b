package nomad

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

func TestACLTokenLifecycle(t *testing.T) {
	s := aclServer(t, nil)
	mgmt := bootstrapACL(t, s).SecretID
	upsertPolicy(t, s, mgmt, "readers", `namespace "default" { policy = "read" }`)

	created := createToken(t, s, mgmt, &structs.ACLToken{Name: "ci", Type: structs.ACLClientToken, Policies: []string{"readers", "readers"}})
	if created.SecretID == "" || created.AccessorID == "" || created.CreateTime.IsZero() || created.CreateIndex == 0 {
		t.Fatalf("created token %+v", created)
	}
	if strings.Join(created.Policies, ",") != "readers" {
		t.Fatalf("policies are stored de-duplicated: %v", created.Policies)
	}
	getToken := func(secret, accessor string) (*structs.ACLToken, error) {
		var out structs.SingleACLTokenResponse
		err := s.RPC("ACL.GetToken", &structs.ACLTokenSpecificRequest{AccessorID: accessor, QueryOptions: query(secret)}, &out)
		return out.Token, err
	}

	t.Run("the secret is answered once and never again", func(t *testing.T) {
		tok, err := getToken(mgmt, created.AccessorID)
		if err != nil || tok == nil || tok.SecretID != "" || tok.SecretHash == "" {
			t.Fatalf("read back %+v, %v: the secret must be empty", tok, err)
		}
		var self structs.SingleACLTokenResponse
		if err := s.RPC("ACL.GetTokenSelf", &structs.GenericRequest{QueryOptions: query(created.SecretID)}, &self); err != nil {
			t.Fatal(err)
		}
		if self.Token.AccessorID != created.AccessorID || self.Token.SecretID != "" {
			t.Fatalf("self = %+v", self.Token)
		}
	})
	t.Run("a token reads itself but not another", func(t *testing.T) {
		if tok, err := getToken(created.SecretID, created.AccessorID); err != nil || tok.Name != "ci" {
			t.Fatalf("self read by accessor: %+v %v", tok, err)
		}
		other := createToken(t, s, mgmt, &structs.ACLToken{Name: "other", Type: structs.ACLClientToken, Policies: []string{"readers"}})
		_, err := getToken(created.SecretID, other.AccessorID)
		requireErr(t, err, structs.ErrPermissionDenied)
		_, err = getToken("", other.AccessorID)
		requireErr(t, err, structs.ErrPermissionDenied)
	})
	t.Run("listing needs management and shows no secrets", func(t *testing.T) {
		var out structs.ACLTokenListResponse
		requireErr(t, s.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: query(created.SecretID)}, &out), structs.ErrPermissionDenied)
		if err := s.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: query(mgmt)}, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Tokens) != 3 {
			t.Fatalf("listed %d tokens, want 3", len(out.Tokens))
		}
		q := query(mgmt)
		q.Prefix = created.AccessorID[:8]
		if err := s.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: q}, &out); err != nil || len(out.Tokens) != 1 {
			t.Fatalf("prefix list: %d tokens, %v", len(out.Tokens), err)
		}
	})
	t.Run("an update keeps the secret and refuses to toggle global", func(t *testing.T) {
		upd := &structs.ACLToken{AccessorID: created.AccessorID, Name: "ci-renamed", Type: structs.ACLClientToken, Policies: []string{"readers"}}
		got := createToken(t, s, mgmt, upd)
		if got.Name != "ci-renamed" || got.SecretID != "" || got.CreateIndex != created.CreateIndex || !got.CreateTime.Equal(created.CreateTime) {
			t.Fatalf("updated %+v", got)
		}
		if _, err := s.ResolveToken(created.SecretID); err != nil {
			t.Fatalf("the secret must still resolve after an update: %v", err)
		}
		upd.Global = true
		err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{upd}, WriteRequest: write(mgmt)}, &structs.ACLTokenUpsertResponse{})
		if err == nil || !strings.Contains(err.Error(), "global") {
			t.Fatalf("toggling global: %v", err)
		}
	})
	t.Run("bad tokens are refused and change nothing", func(t *testing.T) {
		for _, c := range []struct {
			tok  *structs.ACLToken
			want string
		}{
			{&structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"nope"}}, "no ACL policy named nope"},
			{&structs.ACLToken{Type: structs.ACLClientToken}, "at least one policy"},
			{&structs.ACLToken{Type: "root"}, `type "root" is not valid`},
			{&structs.ACLToken{AccessorID: "00000000-0000-0000-0000-000000000000", Type: structs.ACLManagementToken}, "not found"},
			{&structs.ACLToken{Type: structs.ACLManagementToken, ExpirationTTL: time.Second}, "minimum 1m0s"},
			{&structs.ACLToken{Type: structs.ACLManagementToken, ExpirationTTL: 48 * time.Hour}, "maximum 24h0m0s"},
		} {
			before, _ := s.State().Index("acl_token")
			err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{c.tok}, WriteRequest: write(mgmt)}, &structs.ACLTokenUpsertResponse{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("token %+v: got %v, want %q", c.tok, err, c.want)
			}
			if after, _ := s.State().Index("acl_token"); after != before {
				t.Errorf("a refused token moved the index")
			}
		}
		err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{Type: structs.ACLManagementToken}}, WriteRequest: write(created.SecretID)}, &structs.ACLTokenUpsertResponse{})
		requireErr(t, err, structs.ErrPermissionDenied)
	})
	t.Run("deleting a token stops it resolving; an unknown accessor deletes nothing", func(t *testing.T) {
		err := s.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{created.AccessorID, "ghost"}, WriteRequest: write(mgmt)}, &structs.GenericResponse{})
		if err == nil || !strings.Contains(err.Error(), "Cannot delete nonexistent tokens: ghost") {
			t.Fatalf("got %v", err)
		}
		if _, err := s.ResolveToken(created.SecretID); err != nil {
			t.Fatal("a refused delete must keep the token")
		}
		if err := s.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{created.AccessorID}, WriteRequest: write(mgmt)}, &structs.GenericResponse{}); err != nil {
			t.Fatal(err)
		}
		_, err = s.ResolveToken(created.SecretID)
		requireErr(t, err, structs.ErrTokenNotFound)
		var self structs.SingleACLTokenResponse
		requireErr(t, s.RPC("ACL.GetTokenSelf", &structs.GenericRequest{QueryOptions: query(created.SecretID)}, &self), structs.ErrTokenNotFound)
	})
}

func TestACLTokenExpires(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := aclServer(t, func(c *Config) { c.Clock = clock })
	mgmt := bootstrapACL(t, s).SecretID
	upsertPolicy(t, s, mgmt, "readers", `namespace "default" { policy = "read" }`)
	tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"readers"}, ExpirationTTL: time.Hour})
	if tok.ExpirationTime == nil || !tok.ExpirationTime.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("expiration = %v, want now + 1h", tok.ExpirationTime)
	}
	if _, err := s.ResolveToken(tok.SecretID); err != nil {
		t.Fatalf("a live token: %v", err)
	}
	clock.Advance(time.Hour)
	_, err := s.ResolveToken(tok.SecretID)
	requireErr(t, err, structs.ErrTokenNotFound)
	var out structs.ResolveACLTokenResponse
	requireErr(t, s.RPC("ACL.ResolveToken", &structs.ResolveACLTokenRequest{SecretID: tok.SecretID, QueryOptions: query("")}, &out), structs.ErrTokenNotFound)
}

func TestServerResolveToken(t *testing.T) {
	s := aclServer(t, nil)
	mgmt := bootstrapACL(t, s).SecretID

	t.Run("no token and no anonymous policy allows nothing", func(t *testing.T) {
		a, err := s.ResolveToken("")
		if err != nil || a == nil || a.IsManagement() || a.AllowNamespace("default") || a.AllowNodeRead() {
			t.Fatalf("anonymous = %v, %v", a, err)
		}
	})
	t.Run("no token gets the anonymous policy once it exists", func(t *testing.T) {
		upsertPolicy(t, s, mgmt, "anonymous", `namespace "default" { policy = "read" }`)
		a, err := s.ResolveToken("")
		if err != nil || !a.AllowNamespaceOperation("default", "read-job") || a.AllowNamespaceOperation("default", "submit-job") {
			t.Fatalf("anonymous = %v, %v", a, err)
		}
	})
	t.Run("an unknown secret is not found", func(t *testing.T) {
		_, err := s.ResolveToken("6a8f6f52-4a40-4d1c-9b53-8b8d1d1f0000")
		if err == nil || err.Error() != "ACL token not found" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a client token's ACL is cached and follows policy changes", func(t *testing.T) {
		upsertPolicy(t, s, mgmt, "dev", `namespace "dev" { policy = "read" }`)
		tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"dev"}})
		a1, err := s.ResolveToken(tok.SecretID)
		if err != nil || a1.AllowNamespaceOperation("dev", "submit-job") || !a1.AllowNamespaceOperation("dev", "read-job") {
			t.Fatalf("dev reader = %v", err)
		}
		a2, _ := s.ResolveToken(tok.SecretID)
		if a1 != a2 {
			t.Fatal("resolving the same token twice must reuse the compiled ACL")
		}
		upsertPolicy(t, s, mgmt, "dev", `namespace "dev" { policy = "write" }`)
		a3, _ := s.ResolveToken(tok.SecretID)
		if !a3.AllowNamespaceOperation("dev", "submit-job") {
			t.Fatal("a changed policy must take effect on the next resolve")
		}
	})
	t.Run("ResolveToken over RPC answers the token and its policies", func(t *testing.T) {
		upsertPolicy(t, s, mgmt, "logs", `namespace "default" { capabilities = ["read-logs"] }`)
		tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"logs", "dev"}})
		var out structs.ResolveACLTokenResponse
		if err := s.RPC("ACL.ResolveToken", &structs.ResolveACLTokenRequest{SecretID: tok.SecretID, QueryOptions: query("")}, &out); err != nil {
			t.Fatal(err)
		}
		if out.Token.AccessorID != tok.AccessorID || out.Token.SecretID != "" || len(out.Policies) != 2 {
			t.Fatalf("resolved %+v with %d policies", out.Token, len(out.Policies))
		}
	})
}

// Secrets never reach disk: neither the raft log nor a snapshot holds a
// token's secret or the secret a request was made with; they hold its
// hash.
func TestACLSecretsAreNeverWrittenToRaft(t *testing.T) {
	s := aclServer(t, nil)
	boot := bootstrapACL(t, s)
	upsertPolicy(t, s, boot.SecretID, "readers", `namespace "default" { policy = "read" }`)
	tok := createToken(t, s, boot.SecretID, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"readers"}})
	if err := s.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var disk []byte
	err := filepath.Walk(filepath.Join(s.config.DataDir, "raft"), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		disk = append(disk, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{boot.SecretID, tok.SecretID} {
		if bytes.Contains(disk, []byte(secret)) {
			t.Fatalf("the secret %s is on disk", secret)
		}
		if !bytes.Contains(disk, []byte(structs.HashACLSecret(secret))) {
			t.Fatalf("the hash of %s is not on disk: the test reads the wrong files", secret)
		}
	}
}

package nomad

import (
	"sync"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// Resolving tokens from many goroutines while their policy changes is
// safe (run with -race), never fails, never sees a half-built ACL, and
// ends on the newest policy.
func TestResolveTokenConcurrentlyWithPolicyChanges(t *testing.T) {
	t.Parallel()
	s := aclServer(t, nil)
	mgmt := bootstrapACL(t, s).SecretID
	read := `namespace "default" { policy = "read" }`
	write := `namespace "default" { policy = "write" }`
	upsertPolicy(t, s, mgmt, "p", read)
	tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"p"}})

	stop := make(chan struct{})
	errs := make(chan string, 8)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				a, err := s.ResolveToken(tok.SecretID)
				if err != nil || !a.AllowNamespaceOperation("default", "read-job") || a.AllowNamespaceOperation("other", "read-job") {
					errs <- "a resolve failed or saw an ACL neither policy version grants"
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		rules := read
		if i%2 == 0 {
			rules = write
		}
		upsertPolicy(t, s, mgmt, "p", rules)
	}
	close(stop)
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
	a, err := s.ResolveToken(tok.SecretID)
	if err != nil || a.AllowNamespaceOperation("default", "submit-job") {
		t.Fatalf("the last version (read) must be in force: %v", err)
	}
}

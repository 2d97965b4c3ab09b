package nomad

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// A held blocking query answers with the rights its token has when it
// wakes, not those it had when it began waiting (promise 9): a token
// deleted meanwhile ends the query with "ACL token not found", and a
// token whose policy no longer grants the read gets no new data.
func TestAHeldBlockingQueryEndsWithItsTokensRights(t *testing.T) {
	s := aclServer(t, nil)
	mgmt := bootstrapACL(t, s).SecretID
	upsertPolicy(t, s, mgmt, "readers", `namespace "default" { policy = "read" }`)
	// register writes a job and waits until its evaluation is done, so
	// that nothing else writes the jobs table while a list is held.
	register := func(id string) {
		t.Helper()
		var out structs.JobRegisterResponse
		if err := userRPC(s, "Job.Register", &structs.JobRegisterRequest{Job: jobIn("default", id), WriteRequest: write(mgmt)}, &out); err != nil {
			t.Fatalf("registering %s: %v", id, err)
		}
		wait.Until(t, 10*time.Second, "the evaluation of "+id, func() bool {
			evals, err := s.State().EvalsByJobAndStatus(nil, "default", id, structs.EvalStatusPending)
			return err == nil && len(evals) == 0
		})
	}
	listIndex := func() uint64 {
		t.Helper()
		var out structs.JobListResponse
		if err := userRPC(s, "Job.List", &structs.JobListRequest{QueryOptions: query(mgmt)}, &out); err != nil {
			t.Fatal(err)
		}
		return out.Index
	}
	type answer struct {
		reply structs.JobListResponse
		err   error
	}
	// hold starts a Job.List as secret blocking past index, and waits
	// until it is held.
	hold := func(secret string, index uint64) <-chan answer {
		t.Helper()
		done := make(chan answer, 1)
		before := s.BlockingQueries()
		go func() {
			var a answer
			q := query(secret)
			q.MinQueryIndex, q.MaxQueryTime = index, time.Minute
			a.err = userRPC(s, "Job.List", &structs.JobListRequest{QueryOptions: q}, &a.reply)
			done <- a
		}()
		wait.Until(t, 10*time.Second, "the list to be held", func() bool { return s.BlockingQueries() == before+1 })
		return done
	}
	result := func(done <-chan answer) answer {
		t.Helper()
		select {
		case a := <-done:
			return a
		case <-time.After(30 * time.Second):
			t.Fatal("the held list did not answer after the write that wakes it")
			return answer{}
		}
	}

	t.Run("a token that stands sees the change", func(t *testing.T) {
		tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"readers"}})
		register("web-1")
		start := listIndex()
		done := hold(tok.SecretID, start)
		register("web-2")
		a := result(done)
		if a.err != nil || a.reply.Index <= start || len(a.reply.Jobs) != 2 {
			t.Fatalf("got %d jobs at index %d (%v), want both past %d", len(a.reply.Jobs), a.reply.Index, a.err, start)
		}
	})

	t.Run("a deleted token ends the query", func(t *testing.T) {
		tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"readers"}})
		register("db-1")
		done := hold(tok.SecretID, listIndex())
		if err := userRPC(s, "ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{tok.AccessorID}, WriteRequest: write(mgmt)}, &structs.GenericResponse{}); err != nil {
			t.Fatal(err)
		}
		register("db-2")
		a := result(done)
		requireErr(t, a.err, structs.ErrTokenNotFound)
		for _, j := range a.reply.Jobs {
			if j.ID == "db-2" {
				t.Fatal("the deleted token's query answered with the job written after the deletion")
			}
		}
	})

	t.Run("a narrowed token gets nothing new", func(t *testing.T) {
		upsertPolicy(t, s, mgmt, "narrowed", `namespace "default" { policy = "read" }`)
		tok := createToken(t, s, mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"narrowed"}})
		register("cache-1")
		start := listIndex()
		done := hold(tok.SecretID, start)
		upsertPolicy(t, s, mgmt, "narrowed", `namespace "other" { policy = "read" }`)
		register("cache-2")
		a := result(done)
		if a.err != nil {
			t.Fatalf("the query ended with %v, want its last answer", a.err)
		}
		if a.reply.Index > start {
			t.Fatalf("the narrowed token's query answered index %d past %d", a.reply.Index, start)
		}
		for _, j := range a.reply.Jobs {
			if j.ID == "cache-2" {
				t.Fatal("the narrowed token's query answered with the job written after its policy changed")
			}
		}
		// Asked again, the request is checked as the token is now.
		q := query(tok.SecretID)
		q.MinQueryIndex = a.reply.Index
		err := userRPC(s, "Job.List", &structs.JobListRequest{QueryOptions: q}, &structs.JobListResponse{})
		requireErr(t, err, structs.ErrPermissionDenied)
	})
}

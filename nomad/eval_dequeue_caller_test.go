package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// An eval leased to a dequeue whose caller has gone away (a follower gave
// up on forwarding it) goes back to the queue at once: the caller cannot
// get the answer, and the eval would otherwise sit outstanding until its
// nack timeout, holding the job's later evals back.
func TestADequeueWhoseCallerLeftLeasesNothing(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, itJob("web", 1))
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := s.evalBroker.Stats()
		return st.TotalReady == 1, "the job's eval to be ready in the broker"
	})

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	args := &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: time.Second}
	args.SetCallContext(gone)
	var reply structs.EvalDequeueResponse
	if err := (&Eval{srv: s}).Dequeue(args, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Eval != nil {
		t.Fatalf("a caller that left was leased eval %s", reply.Eval.ID)
	}
	if st := s.evalBroker.Stats(); st.TotalUnacked != 0 || st.TotalReady != 1 {
		t.Fatalf("broker after the caller left: %d unacked, %d ready; want the eval back in the queue", st.TotalUnacked, st.TotalReady)
	}

	var next structs.EvalDequeueResponse
	err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: 5 * time.Second}, &next)
	if err != nil || next.Eval == nil || next.Eval.JobID != "web" {
		t.Fatalf("the next worker got %+v (%v), want the job's eval", next.Eval, err)
	}
}

package nomad

import (
	"errors"
	"strings"
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func TestExistingJob(t *testing.T) {
	st, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(10, func(tx *state.Txn) error { return tx.UpsertJob(jobIn("web", "api")) }); err != nil {
		t.Fatal(err)
	}
	job, err := existingJob(st, "web", "api")
	if err != nil || job == nil || job.ID != "api" || job.Namespace != "web" {
		t.Fatalf("existingJob(web, api) = %v, %v; want the stored job", job, err)
	}
	for _, c := range []struct{ ns, id string }{{"web", "nope"}, {structs.DefaultNamespace, "api"}} {
		job, err := existingJob(st, c.ns, c.id)
		if job != nil || !errors.Is(err, structs.ErrNotFound) {
			t.Fatalf("existingJob(%s, %s) = %v, %v; want ErrNotFound", c.ns, c.id, job, err)
		}
		if want := `job "` + c.id + `": `; !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("error %q does not name the job as %q", err, want)
		}
	}
}

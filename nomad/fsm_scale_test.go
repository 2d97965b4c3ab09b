package nomad

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scaleLog registers web and scales it up with an eval, then records an
// event-only request.
func scaleLog(t *testing.T) *fsmLog {
	l := &fsmLog{t: t}
	job := fsmTestJob("web")
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e1", job, structs.EvalStatusPending)})
	three := int64(3)
	eval := evalFor("e2", job, structs.EvalStatusPending)
	eval.TriggeredBy = structs.EvalTriggerScaling
	l.add(structs.JobScaleRequestType, &structs.JobScaleApplyRequest{
		Namespace: "default", JobID: "web", Group: "web", Count: &three, SubmitTime: 4242, Eval: eval,
		Event: &structs.ScalingEvent{Time: 4242, Count: &three, Message: "up", EvalID: &eval.ID, Meta: map[string]any{"k": "v"}},
	})
	l.add(structs.JobScaleRequestType, &structs.JobScaleApplyRequest{
		Namespace: "default", JobID: "web", Group: "web",
		Event: &structs.ScalingEvent{Time: 4343, Error: true, Message: "no metrics"},
	})
	return l
}

func TestFSMJobScaleAppliesAndSurvivesASnapshot(t *testing.T) {
	f := testFSM(t)
	scaleLog(t).applyTo(t, f)
	st := f.State()
	job, _ := st.JobByID(nil, "default", "web")
	if job.TaskGroups[0].Count != 3 || job.Version != 1 || job.JobModifyIndex != 2 || job.SubmitTime != 4242 {
		t.Fatalf("job: count %d version %d index %d submit %d", job.TaskGroups[0].Count, job.Version, job.JobModifyIndex, job.SubmitTime)
	}
	if e, _ := st.EvalByID(nil, "e2"); e == nil || e.CreateIndex != 2 || e.JobModifyIndex != 2 {
		t.Fatalf("scale eval: %+v", e)
	}
	events, _ := st.ScalingEventsByJob(nil, "default", "web")
	got := events.ScalingEvents["web"]
	if len(got) != 2 || got[0].Message != "no metrics" || got[0].Time != 4343 || got[0].PreviousCount != 3 ||
		got[1].Time != 4242 || got[1].PreviousCount != 1 || got[1].CreateIndex != 2 || got[1].Meta["k"] != "v" {
		t.Fatalf("events: %+v %+v", got[0], got[1])
	}

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	restored := testFSM(t)
	if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	again, _ := restored.State().ScalingEventsByJob(nil, "default", "web")
	if !structs.DeepEqual(events, again) {
		t.Fatalf("restored events differ (-before +restored):\n%s", cmp.Diff(events, again, cmpopts.EquateEmpty()))
	}

	// Two servers applying the same log hold the same events.
	other := testFSM(t)
	scaleLog(t).applyTo(t, other)
	if theirs, _ := other.State().ScalingEventsByJob(nil, "default", "web"); !structs.DeepEqual(events, theirs) {
		t.Fatal("two FSMs fed the same scaling log differ")
	}
}

// The FSM checks a scaling request against the state it applies to: a
// group removed since the leader read the job is refused, with nothing
// written.
func TestFSMRefusesAScaleThatNoLongerFits(t *testing.T) {
	f := testFSM(t)
	l := scaleLog(t)
	l.entries = l.entries[:1]
	l.applyTo(t, f)
	before := dumpState(t, f.State())
	two := int64(2)
	bad := &fsmLog{t: t}
	bad.add(structs.JobScaleRequestType, &structs.JobScaleApplyRequest{Namespace: "default", JobID: "web", Group: "gone", Count: &two,
		Eval: evalFor("e9", fsmTestJob("web"), structs.EvalStatusPending), Event: &structs.ScalingEvent{Time: 1, Count: &two}})
	bad.entries[0].Index = 50
	resp := f.Apply(bad.entries[0])
	if err, ok := resp.(error); !ok || !strings.Contains(err.Error(), `has no task group "gone"`) {
		t.Fatalf("a scale of a missing group must be refused, got %v", resp)
	}
	if !structs.DeepEqual(before, dumpState(t, f.State())) {
		t.Fatal("a refused scale changed the state")
	}
	if ev, _ := f.State().ScalingEventsByJob(nil, "default", "web"); ev != nil {
		t.Fatal("a refused scale recorded an event")
	}
}

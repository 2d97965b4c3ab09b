package structs

import (
	"bytes"
	"encoding/json"
	"testing"
)

// An alloc event's payload points at the stored alloc, job and all; its
// JSON is what a copy without the job encodes to, and the alloc keeps
// its job.
func TestAllocEventPayloadLeavesTheJobOutOfItsJSON(t *testing.T) {
	job := &Job{ID: "web", Name: "web"}
	a := &Allocation{ID: "a1", JobID: "web", Job: job, ClientStatus: AllocClientStatusRunning,
		TaskStates: map[string]*TaskState{"t": {State: TaskStateRunning}}}
	got, err := json.Marshal(Event{Topic: TopicAllocation, Key: a.ID, Payload: &AllocEventPayload{Allocation: a}})
	if err != nil {
		t.Fatal(err)
	}
	withoutJob := *a
	withoutJob.Job = nil
	want, err := json.Marshal(Event{Topic: TopicAllocation, Key: a.ID, Payload: struct{ Allocation *Allocation }{&withoutJob}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("payload JSON\n got %s\nwant %s", got, want)
	}
	if !bytes.Contains(got, []byte(`"Job":null`)) || a.Job != job {
		t.Fatalf("the job is in the JSON, or the alloc lost it: %s", got)
	}
	empty, err := json.Marshal(&AllocEventPayload{})
	if err != nil || string(empty) != `{"Allocation":null}` {
		t.Fatalf("empty payload = %s, %v", empty, err)
	}
}

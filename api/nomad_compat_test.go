package api

import (
	"encoding/json"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
)

// These tests hold the promise in DESIGN.md "Compatibility": Drover's job
// JSON is Nomad's job JSON, and defaults are Nomad's defaults.

func TestJobJSONRoundTripsThroughNomadsClientTypes(t *testing.T) {
	want := fullJob()
	first, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}

	var viaNomad nomad.Job
	if err := json.Unmarshal(first, &viaNomad); err != nil {
		t.Fatalf("Nomad's client cannot decode a Drover job: %v", err)
	}
	second, err := json.Marshal(&viaNomad)
	if err != nil {
		t.Fatal(err)
	}
	var got Job
	if err := json.Unmarshal(second, &got); err != nil {
		t.Fatalf("Drover cannot decode a job encoded by Nomad's client: %v", err)
	}

	// Every field Drover sets must survive the trip; one that does not has
	// a JSON name or type Nomad does not share.
	assertJSONEqual(t, want, &got)
}

func TestCanonicalizeAppliesNomadsDefaults(t *testing.T) {
	cases := []struct {
		name string
		job  func() *Job
	}{
		{"a job that sets everything", fullJob},
		{"a bare service job", func() *Job { return sparseJob(JobTypeService) }},
		{"a bare batch job", func() *Job { return sparseJob(JobTypeBatch) }},
		{"a bare system job", func() *Job { return sparseJob(JobTypeSystem) }},
		{"a bare sysbatch job", func() *Job { return sparseJob(JobTypeSysbatch) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ours := tc.job()
			raw, err := json.Marshal(ours)
			if err != nil {
				t.Fatal(err)
			}
			var theirs nomad.Job
			if err := json.Unmarshal(raw, &theirs); err != nil {
				t.Fatal(err)
			}

			ours.Canonicalize()
			theirs.Canonicalize()

			// Decode Nomad's result into Drover's types, which drops the
			// fields Drover does not model.
			raw, err = json.Marshal(&theirs)
			if err != nil {
				t.Fatal(err)
			}
			var want Job
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			// The one intended difference: see Job.Canonicalize.
			if *want.NodePool == "" {
				want.NodePool = new(NodePoolDefault)
			}
			assertJSONEqual(t, &want, ours)
		})
	}
}

func sparseJob(jobType string) *Job {
	return &Job{
		ID:   new("j"),
		Type: new(jobType),
		TaskGroups: []*TaskGroup{{
			Name:     new("g"),
			Services: []*Service{{Checks: []ServiceCheck{{Type: "tcp"}}}},
			Tasks: []*Task{{
				Name:      "t",
				Driver:    "raw_exec",
				Templates: []*Template{{ChangeMode: new("signal")}},
				Artifacts: []*TaskArtifact{{GetterSource: new("https://example.com/x.bin"), GetterMode: new("file")}},
			}},
		}},
	}
}

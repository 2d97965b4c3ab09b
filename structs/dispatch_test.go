package structs

import (
	"strings"
	"testing"
	"time"
)

func parameterizedTestJob(payload string) *Job {
	j := testJob()
	j.ID = "encode"
	j.Type = JobTypeBatch
	j.ParameterizedJob = &ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"input", "bucket"}, MetaOptional: []string{"profile"}}
	j.TaskGroups[0].Tasks[0].DispatchPayload = &DispatchPayloadConfig{File: "in/input.json"}
	j.Canonicalize()
	return j
}

func TestDispatchedIDHasNomadsShape(t *testing.T) {
	at := time.Unix(1700000000, 0)
	if got := DispatchedID("encode", "", at, "0a1b2c3d"); got != "encode/dispatch-1700000000-0a1b2c3d" {
		t.Fatalf("ID %q", got)
	}
	if got := DispatchedID("encode", "nightly", at, "0a1b2c3d"); got != "encode/dispatch-nightly-1700000000-0a1b2c3d" {
		t.Fatalf("ID with template %q", got)
	}
	c := &Job{ID: "encode/dispatch-1700000000-0a1b2c3d", ParentID: "encode", Dispatched: true}
	if !c.IsDispatchedChildOf("encode") || c.IsDispatchedChildOf("enc") {
		t.Fatal("IsDispatchedChildOf must match the parent exactly")
	}
	c.Dispatched = false
	if c.IsDispatchedChildOf("encode") {
		t.Fatal("a child that was not dispatched (a periodic launch) is not a dispatched child")
	}
}

func TestParameterizedPayloadDefaultsToOptional(t *testing.T) {
	j := parameterizedTestJob("")
	if j.ParameterizedJob.Payload != DispatchPayloadOptional {
		t.Fatalf("payload %q after Canonicalize, want optional", j.ParameterizedJob.Payload)
	}
	if err := j.Validate(); err != nil {
		t.Fatalf("a canonical parameterized batch job must validate: %v", err)
	}
}

func TestValidateParameterizedBlock(t *testing.T) {
	cases := []struct {
		name   string
		change func(j *Job)
		want   string // "" means valid
	}{
		{"a sysbatch job may be parameterized", func(j *Job) {
			j.Type = JobTypeSysBatch
			j.TaskGroups[0].Count, j.TaskGroups[0].ReschedulePolicy = 1, nil
		}, ""},
		{"an unknown payload setting is named with the allowed ones", func(j *Job) { j.ParameterizedJob.Payload = "sometimes" },
			`parameterized: payload "sometimes" is not one of "optional", "required", "forbidden"`},
		{"a key both required and optional is refused", func(j *Job) { j.ParameterizedJob.MetaOptional = []string{"input"} },
			`meta key "input" is both in meta_required and meta_optional`},
		{"a service job cannot be parameterized", func(j *Job) { j.Type = JobTypeService },
			`a parameterized job must be of type "batch" or "sysbatch", not "service"`},
		{"an absolute payload file is refused", func(j *Job) { j.TaskGroups[0].Tasks[0].DispatchPayload.File = "/etc/passwd" },
			`dispatch_payload: file "/etc/passwd" must be relative`},
		{"a payload file that climbs out is refused", func(j *Job) { j.TaskGroups[0].Tasks[0].DispatchPayload.File = "a/../../secrets/x" },
			`file "a/../../secrets/x" escapes the task's local directory`},
		{"a payload block without a file is allowed, as by Nomad", func(j *Job) { j.TaskGroups[0].Tasks[0].DispatchPayload.File = "" }, ""},
		{"a dispatched child is not checked as a parent", func(j *Job) {
			j.Dispatched, j.Type, j.ParameterizedJob.Payload = true, JobTypeBatch, "bogus"
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := parameterizedTestJob(DispatchPayloadRequired)
			tc.change(j)
			err := j.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestValidateDispatchMatrix(t *testing.T) {
	full := map[string]string{"input": "a.csv", "bucket": "b"}
	big := make([]byte, DispatchPayloadSizeLimit+1)
	cases := []struct {
		name    string
		payload string // the parent's setting
		req     JobDispatchRequest
		want    []string // substrings of the error; none means valid
	}{
		{"required meta and an optional payload", "optional", JobDispatchRequest{Meta: full}, nil},
		{"optional meta as well, and a payload", "optional", JobDispatchRequest{Meta: map[string]string{"input": "a", "bucket": "b", "profile": "fast"}, Payload: []byte("x")}, nil},
		{"a required payload given", "required", JobDispatchRequest{Meta: full, Payload: []byte("{}")}, nil},
		{"a forbidden payload left out", "forbidden", JobDispatchRequest{Meta: full}, nil},
		{"a payload of exactly 16 KiB", "optional", JobDispatchRequest{Meta: full, Payload: make([]byte, DispatchPayloadSizeLimit)}, nil},
		{"a required payload missing", "required", JobDispatchRequest{Meta: full},
			[]string{`payload is missing: job "encode" requires one (parameterized payload = "required")`}},
		{"a forbidden payload given", "forbidden", JobDispatchRequest{Meta: full, Payload: []byte("x")},
			[]string{`payload of 1 bytes is not allowed: job "encode" forbids one`}},
		{"a payload over 16 KiB", "optional", JobDispatchRequest{Meta: full, Payload: big},
			[]string{"payload is 16385 bytes, more than the limit of 16384 bytes (16 KiB)"}},
		{"required keys missing are named with meta_required", "optional", JobDispatchRequest{Meta: map[string]string{"profile": "x"}},
			[]string{`required meta keys ["bucket", "input"] are missing (job "encode" has meta_required = ["bucket", "input"])`}},
		{"unpermitted keys are named with the allowed ones", "optional", JobDispatchRequest{Meta: map[string]string{"input": "a", "bucket": "b", "zone": "z", "owner": "o"}},
			[]string{`meta keys ["owner", "zone"] are not allowed by job "encode"; allowed keys: meta_required = ["bucket", "input"], meta_optional = ["profile"]`}},
		{"every problem is reported at once", "required", JobDispatchRequest{Meta: map[string]string{"zone": "z"}},
			[]string{"payload is missing", `meta keys ["zone"] are not allowed`, `required meta keys ["bucket", "input"] are missing`}},
		{"a priority out of range", "optional", JobDispatchRequest{Meta: full, Priority: 101},
			[]string{"priority 101 must be between 1 and 100"}},
		{"an ID prefix template with a slash", "optional", JobDispatchRequest{Meta: full, IdPrefixTemplate: "a/b"},
			[]string{`ID prefix template "a/b" must not contain`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := parameterizedTestJob(tc.payload)
			err := ValidateDispatch(parent, &tc.req)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want errors %q, got none", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestValidateDispatchWithoutMetaKeysSaysNoneAreAllowed(t *testing.T) {
	parent := parameterizedTestJob("optional")
	parent.ParameterizedJob.MetaRequired, parent.ParameterizedJob.MetaOptional = nil, nil
	err := ValidateDispatch(parent, &JobDispatchRequest{Meta: map[string]string{"k": "v"}})
	if err == nil || !strings.Contains(err.Error(), `meta keys ["k"] are not allowed by job "encode"; allowed keys: none`) {
		t.Fatalf("got %v", err)
	}
}

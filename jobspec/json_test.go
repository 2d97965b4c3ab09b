package jobspec

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

func TestHCLJSONJobFileParsesLikeItsNativeTwin(t *testing.T) {
	native := mustParseFile(t, "../examples/web.hcl")
	fromJSON := mustParseFile(t, "web.hcl.json")
	assertEqual(t, native, fromJSON)
}

func TestAPIJSONIsDecodedStraightIntoTheJob(t *testing.T) {
	got := mustParseFile(t, "api.json")
	want := &api.Job{
		ID:          new("web"),
		Name:        new("web"),
		Type:        new("service"),
		Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name:     new("web"),
			Count:    new(2),
			Networks: []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}},
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "raw_exec",
				Config: map[string]interface{}{
					"command": "/usr/bin/python3",
					"args":    []interface{}{"-m", "http.server", "${NOMAD_PORT_http}"},
				},
				KillTimeout: new(5 * time.Second),
				Resources:   &api.Resources{CPU: new(100), MemoryMB: new(64)},
			}},
		}},
	}
	assertEqual(t, want, got)
}

func TestAPIJSONRoundTripsAParsedJob(t *testing.T) {
	parsed := mustParseFile(t, "full.hcl")
	cases := []struct {
		name string
		body func() ([]byte, error)
	}{
		{"wrapped as a register request", func() ([]byte, error) {
			return json.Marshal(api.JobRegisterRequest{Job: parsed})
		}},
		{"as the bare job object", func() ([]byte, error) { return json.Marshal(parsed) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := tc.body()
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseWithConfig(&ParseConfig{Path: "job.json", Body: body})
			if err != nil {
				t.Fatal(err)
			}
			// Compared as JSON: JSON has one number type, so driver config
			// ints come back as float64.
			want, _ := json.Marshal(parsed)
			have, _ := json.Marshal(got)
			if string(want) != string(have) {
				t.Errorf("round trip changed the job:\n%s", lineDiff(string(want), string(have)))
			}
		})
	}
}

func TestJSONErrorsPointAtTheProblem(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		wants []string
	}{
		{"an API field of the wrong type", "{\"Job\": {\n  \"ID\": 5\n}}",
			[]string{"job.json:2,10-10: Invalid job JSON; The field Job.ID cannot hold a JSON number; it needs a string."}},
		{"a null API job", `{"Job": null}`, []string{"job.json:1,1-1: Missing job"}},
		{"broken JSON", "{\"job\": {\n  \"web\": {,}\n}}", []string{"job.json:2,11-12:"}},
		{"an unknown HCL JSON argument", `{"job": {"web": {"typo": 1}}}`,
			[]string{`job.json:1,18-24: Extraneous JSON object property; No argument or block type is named "typo".`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseString(t, "job.json", tc.src)
			assertErrorContains(t, err, tc.wants...)
		})
	}
}

package api

import "testing"

func TestScaleSendsNomadsScalingRequest(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("PUT /v1/job/web/scale", reply{Body: `{"EvalID":"e1","EvalCreateIndex":9,"JobModifyIndex":9,"Index":9}`,
		Headers: map[string]string{"X-Nomad-Index": "9"}})
	n := 3
	resp, wm, err := c.Jobs().Scale("web", "cache", &n, "by hand", false, map[string]any{"who": "me"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID != "e1" || resp.EvalCreateIndex != 9 || resp.JobModifyIndex != 9 || wm.LastIndex != 9 {
		t.Fatalf("response %+v %+v", resp, wm)
	}
	if err := subsetJSON(f.last().Body, `{"Count":3,"Target":{"Job":"web","Group":"cache"},"Message":"by hand","Error":false,"Meta":{"who":"me"}}`); err != nil {
		t.Fatal(err)
	}

	// Without a count the request only records an event: Count is null.
	if _, _, err := c.Jobs().Scale("web", "cache", nil, "metrics down", true, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := subsetJSON(f.last().Body, `{"Count":null,"Error":true,"Message":"metrics down"}`); err != nil {
		t.Fatal(err)
	}

	req := &ScalingRequest{Count: new(int64(0)), Target: map[string]string{"Group": "cache"}, JobModifyIndex: 7, PolicyOverride: true}
	if _, _, err := c.Jobs().ScaleWithRequest("web", req, nil); err != nil {
		t.Fatal(err)
	}
	if err := subsetJSON(f.last().Body, `{"Count":0,"Target":{"Group":"cache"},"JobModifyIndex":7,"PolicyOverride":true}`); err != nil {
		t.Fatal(err)
	}
}

func TestScaleStatusDecodesNomadsAnswer(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/job/web/scale", reply{Headers: map[string]string{"X-Nomad-Index": "12"}, Body: `{"JobID":"web","Namespace":"default",
		"JobCreateIndex":3,"JobModifyIndex":10,"JobStopped":false,"TaskGroups":{"cache":{"Desired":3,"Placed":3,"Running":2,"Healthy":1,"Unhealthy":1,
		"Events":[{"Count":3,"PreviousCount":1,"Error":false,"Message":"up","Meta":{"a":"b"},"EvalID":"e1","Time":1700000000000000000,"CreateIndex":10},
		{"Count":null,"PreviousCount":1,"Error":true,"Message":"no metrics","Meta":null,"EvalID":null,"Time":1600000000000000000,"CreateIndex":8}]}}}`})
	st, qm, err := c.Jobs().ScaleStatus("web", &QueryOptions{WaitIndex: 11})
	if err != nil {
		t.Fatal(err)
	}
	if qm.LastIndex != 12 || f.last().Query.Get("index") != "11" {
		t.Fatalf("blocking query: meta %+v, query %v", qm, f.last().Query)
	}
	g := st.TaskGroups["cache"]
	if st.JobID != "web" || st.JobModifyIndex != 10 || g.Desired != 3 || g.Running != 2 || g.Healthy != 1 || g.Unhealthy != 1 || len(g.Events) != 2 {
		t.Fatalf("status %+v", st)
	}
	if e := g.Events[0]; *e.Count != 3 || *e.EvalID != "e1" || e.Time != 1700000000000000000 || e.Meta["a"] != "b" {
		t.Fatalf("event %+v", e)
	}
	if e := g.Events[1]; e.Count != nil || e.EvalID != nil || !e.Error {
		t.Fatalf("event %+v", e)
	}
}

func TestGroupWithScalingStartsAtItsMinimum(t *testing.T) {
	job := &Job{ID: new("web"), TaskGroups: []*TaskGroup{
		{Name: new("a"), Scaling: &ScalingPolicy{Min: new(int64(2)), Max: new(int64(5))}},
		{Name: new("b"), Count: new(4), Scaling: &ScalingPolicy{Max: new(int64(5))}},
	}}
	job.Canonicalize()
	a, b := job.TaskGroups[0], job.TaskGroups[1]
	if *a.Count != 2 || !*a.Scaling.Enabled || a.Scaling.Type != ScalingPolicyTypeHorizontal {
		t.Fatalf("group a: count %d scaling %+v", *a.Count, a.Scaling)
	}
	if *b.Count != 4 || *b.Scaling.Min != 4 {
		t.Fatalf("group b: count %d min %d", *b.Count, *b.Scaling.Min)
	}
}

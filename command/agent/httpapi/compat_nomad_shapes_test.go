package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

// fillAll sets every field reachable from v to a non-zero value: lists and
// maps get one element, pointers are allocated. depth bounds recursive
// types.
func fillAll(v reflect.Value, depth int) {
	if depth > 10 {
		return
	}
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)))
		return
	}
	if v.Type() == reflect.TypeOf(time.Duration(0)) {
		v.SetInt(int64(3 * time.Second))
		return
	}
	if v.Type() == reflect.TypeOf(structs.Attributes{}) {
		// Its fields are unexported: set it as the map it is sent as.
		v.Set(reflect.ValueOf(structs.AttributesOf("x", "x")))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillAll(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillAll(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k := reflect.New(v.Type().Key()).Elem()
		fillAll(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fillAll(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf("x"))
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
}

// TestEveryFieldDecodesWithNomadsClientTypes encodes each object the HTTP
// API returns, with every field set, and decodes it into the type Nomad's
// Go client uses for that endpoint. A field whose JSON type differs (a
// time.Time where Nomad has nanoseconds, a list where Nomad has a map)
// fails here even if no test happens to set it.
func TestEveryFieldDecodesWithNomadsClientTypes(t *testing.T) {
	cases := []struct {
		name       string
		drover     any
		nomadShape any
	}{
		{"Job", &structs.Job{}, &nomadapi.Job{}},
		{"JobListStub", &structs.JobListStub{}, &nomadapi.JobListStub{}},
		{"JobSummary", &structs.JobSummary{}, &nomadapi.JobSummary{}},
		{"JobVersionsResponse", &structs.JobVersionsResponse{}, &nomadapi.JobVersionsResponse{}},
		{"JobPlanResponse", &structs.JobPlanResponse{}, &nomadapi.JobPlanResponse{}},
		{"JobRegisterResponse", &structs.JobRegisterResponse{}, &nomadapi.JobRegisterResponse{}},
		{"JobDeregisterResponse", &structs.JobDeregisterResponse{}, &nomadapi.JobDeregisterResponse{}},
		{"Allocation", &structs.Allocation{}, &nomadapi.Allocation{}},
		{"AllocListStub", &structs.AllocListStub{}, &nomadapi.AllocationListStub{}},
		{"Evaluation", &structs.Evaluation{}, &nomadapi.Evaluation{}},
		{"Deployment", &structs.Deployment{}, &nomadapi.Deployment{}},
		{"Node", &structs.Node{}, &nomadapi.Node{}},
		{"NodeListStub", &structs.NodeListStub{}, &nomadapi.NodeListStub{}},
		{"NodeDrainUpdateResponse", &structs.NodeDrainUpdateResponse{}, &nomadapi.NodeDrainUpdateResponse{}},
		{"NodeEligibilityUpdateResponse", &structs.NodeEligibilityUpdateResponse{}, &nomadapi.NodeEligibilityUpdateResponse{}},
		{"RaftConfiguration", &structs.RaftConfigurationResponse{}, &nomadapi.RaftConfiguration{}},
		{"PeriodicForceResponse", &structs.PeriodicForceResponse{}, &struct{ EvalID string }{}},
		{"NodeEvaluateResponse", &nodeEvaluateResponse{}, &struct{ EvalID string }{}},
		{"SearchResponse", &searchResponse{}, &nomadapi.SearchResponse{}},
		{"NodePool", &nodePool{}, &nomadapi.NodePool{}},
		{"EvalCount", &struct{ Count int }{}, &nomadapi.EvalCountResponse{}},
		{"AllocResourceUsage", &api.AllocResourceUsage{}, &nomadapi.AllocResourceUsage{}},
		{"JobValidateResponse", &api.JobValidateResponse{}, &nomadapi.JobValidateResponse{}},
		{"JobParse", &api.Job{}, &nomadapi.Job{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fillAll(reflect.ValueOf(c.drover).Elem(), 0)
			raw, err := json.Marshal(c.drover)
			if err != nil {
				t.Fatalf("encoding: %v", err)
			}
			if err := json.Unmarshal(raw, c.nomadShape); err != nil {
				t.Fatalf("Nomad's client cannot decode Drover's %s: %v", c.name, err)
			}
		})
	}
}

// TestEveryFieldOfNomadsRequestsDecodes is the other direction: each body
// Nomad's Go client sends, with every field set (Nomad features Drover
// does not have included), decodes into what Drover's handler reads.
func TestEveryFieldOfNomadsRequestsDecodes(t *testing.T) {
	cases := []struct {
		name   string
		nomad  any
		drover any
	}{
		{"JobRegisterRequest", &nomadapi.JobRegisterRequest{}, &api.JobRegisterRequest{}},
		{"JobPlanRequest", &nomadapi.JobPlanRequest{}, &api.JobPlanRequest{}},
		{"JobValidateRequest", &nomadapi.JobValidateRequest{}, &api.JobValidateRequest{}},
		{"JobsParseRequest", &nomadapi.JobsParseRequest{}, &api.JobsParseRequest{}},
		{"JobRevertRequest", &nomadapi.JobRevertRequest{}, &structs.JobRevertRequest{}},
		{"JobStabilityRequest", &nomadapi.JobStabilityRequest{}, &structs.JobStabilityRequest{}},
		{"JobEvaluateRequest", &nomadapi.JobEvaluateRequest{}, &structs.JobEvaluateRequest{}},
		{"NodeUpdateDrainRequest", &nomadapi.NodeUpdateDrainRequest{}, &nodeDrainBody{}},
		{"NodeUpdateEligibilityRequest", &nomadapi.NodeUpdateEligibilityRequest{}, &struct {
			NodeID      string
			Eligibility string
		}{}},
		{"SearchRequest", &nomadapi.SearchRequest{}, &searchRequest{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fillAll(reflect.ValueOf(c.nomad).Elem(), 0)
			raw, err := json.Marshal(c.nomad)
			if err != nil {
				t.Fatalf("encoding: %v", err)
			}
			if err := json.Unmarshal(raw, c.drover); err != nil {
				t.Fatalf("Drover cannot decode Nomad's %s: %v", c.name, err)
			}
		})
	}
}

// TestAFullNomadJobConverts runs a Nomad job with every field set through
// what a register does before validation: canonicalize, convert,
// canonicalize again. Nothing may panic on fields Drover does not expect.
func TestAFullNomadJobConverts(t *testing.T) {
	var nj nomadapi.Job
	fillAll(reflect.ValueOf(&nj).Elem(), 0)
	raw, err := json.Marshal(&nj)
	if err != nil {
		t.Fatal(err)
	}
	var j api.Job
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	j.Canonicalize()
	job := ApiJobToStructJob(&j)
	job.Canonicalize()
	_ = job.Validate()
	if _, err := job.Diff(job.Copy(), true); err != nil {
		t.Fatal(err)
	}
}

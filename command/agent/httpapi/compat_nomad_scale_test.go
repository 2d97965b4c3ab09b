package httpapi

import (
	"errors"
	"net/rpc"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/structs"
)

// While a deployment of the job is in progress the server refuses a count
// change (see the state tests); the refusal reaches Nomad's client as a
// 400 whose body is Nomad's exact words, which tools match on. The
// handler's request is checked on the way.
func TestNomadClientSeesNomadsWordsForAScaleBlockedByADeployment(t *testing.T) {
	var got *structs.JobScaleRequest
	srv := fakeAPI(t, fakeRPC{"Job.Scale": func(args, reply any) error {
		got = args.(*structs.JobScaleRequest)
		return rpc.ServerError("bad request: " + structs.ErrScalingBlocked.Error())
	}}, nil)
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL, Namespace: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Jobs().ScaleWithRequest("web", &nomadapi.ScalingRequest{Count: ptr(int64(2)), Target: map[string]string{"Group": "g"},
		Message: "m", Meta: map[string]any{"k": "v"}, JobModifyIndex: 7, PolicyOverride: true}, nil)
	var ue nomadapi.UnexpectedResponseError
	if !errors.As(err, &ue) || ue.StatusCode() != 400 || ue.Body() != "job scaling blocked due to active deployment" {
		t.Fatalf("scaling during a deployment: %v", err)
	}
	if got == nil || got.JobID != "web" || got.Namespace != "prod" || *got.Count != 2 || got.Target["Group"] != "g" ||
		got.Message != "m" || got.Meta["k"] != "v" || got.JobModifyIndex != 7 || !got.PolicyOverride {
		t.Fatalf("request passed to the server: %+v", got)
	}
}

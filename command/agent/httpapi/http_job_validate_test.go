package httpapi

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

// A leader of an earlier release has no Job.Validate: the agent then
// admits the job itself, with the server's admission, and answers as the
// server would have.
func TestValidateWithoutTheServersJobValidateAdmitsTheJobHere(t *testing.T) {
	srv := fakeAPI(t, fakeRPC{}, nil)

	bad := mockJob("bad", 1)
	bad.Priority = ptr(500)
	var out api.JobValidateResponse
	callOK(t, "PUT", srv.URL+"/v1/validate/job", api.JobValidateRequest{Job: bad}, &out)
	if len(out.ValidationErrors) == 0 || !strings.Contains(out.Error, "invalid job: ") || !strings.Contains(out.Error, "priority") || !out.DriverConfigValidated {
		t.Fatalf("an invalid job validated here: %+v", out)
	}

	out = api.JobValidateResponse{}
	callOK(t, "PUT", srv.URL+"/v1/validate/job", api.JobValidateRequest{Job: mockJob("fine", 1)}, &out)
	if len(out.ValidationErrors) != 0 || out.Error != "" {
		t.Fatalf("a valid job validated here: %+v", out)
	}
}

// A server that has Job.Validate is asked, and its answer is the answer.
func TestValidateAsksTheServer(t *testing.T) {
	var asked *structs.JobValidateRequest
	srv := fakeAPI(t, fakeRPC{"Job.Validate": func(args, reply any) error {
		asked = args.(*structs.JobValidateRequest)
		r := reply.(*structs.JobValidateResponse)
		r.DriverConfigValidated, r.ValidationErrors, r.Error = true, []string{"from the server"}, "invalid job: from the server"
		return nil
	}}, nil)
	var out api.JobValidateResponse
	callOK(t, "PUT", srv.URL+"/v1/validate/job?namespace=team", api.JobValidateRequest{Job: mockJob("x", 1)}, &out)
	if asked == nil || asked.Namespace != "team" || asked.Job.Namespace != "team" {
		t.Fatalf("the server was asked %+v", asked)
	}
	if len(out.ValidationErrors) != 1 || out.ValidationErrors[0] != "from the server" {
		t.Fatalf("answer %+v, want the server's", out)
	}
}

package nomad

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// aclTokens is a server with ACLs on, a management token, and one client
// token per policy, by the policy's name.
type aclTokens struct {
	s      *Server
	mgmt   string
	secret map[string]string
}

// newACLTokens starts the server with no scheduler workers unless cb asks
// for some. The tests tell that a refused request wrote nothing by the
// raft index holding still, and a worker writes whenever it gets to the
// evals of earlier, accepted requests (a blocked eval, the cancelling of
// the one it supersedes): with a worker, "a refused Job.Evaluate wrote"
// failed about one run in five. A test that needs placements runs
// workers and waits until they are done before it measures.
func newACLTokens(t *testing.T, policies map[string]string, cb func(*Config)) *aclTokens {
	t.Helper()
	s := aclServer(t, func(c *Config) {
		c.NumSchedulers = 0
		if cb != nil {
			cb(c)
		}
	})
	boot := bootstrapACL(t, s)
	f := &aclTokens{s: s, mgmt: boot.SecretID, secret: map[string]string{}}
	for name, rules := range policies {
		upsertPolicy(t, s, boot.SecretID, name, rules)
		tok := createToken(t, s, boot.SecretID, &structs.ACLToken{Name: name, Type: structs.ACLClientToken, Policies: []string{name}})
		f.secret[name] = tok.SecretID
	}
	return f
}

// The policies the endpoint tests use.
var testPolicies = map[string]string{
	"reader":     `namespace "default" { policy = "read" }`,
	"writer":     `namespace "default" { policy = "write" }`,
	"dispatcher": `namespace "default" { capabilities = ["dispatch-job"] }`,
	"scaler":     `namespace "default" { policy = "scale" }`,
	"elsewhere":  `namespace "other" { policy = "write" }`,
	"lifecycle":  `namespace "default" { capabilities = ["alloc-lifecycle"] }`,
	"noder":      `node { policy = "read" }`,
	"nodewriter": `node { policy = "write" }`,
	"opreader":   `operator { policy = "read" }`,
	"opwriter":   `operator { policy = "write" }`,
}

func jobIn(ns, id string) *structs.Job {
	j := itJob(id, 1)
	j.Namespace = ns
	return j
}

// Each job endpoint asks for Nomad's capability in the job's namespace: a
// token with it succeeds, one without gets "Permission denied" and
// changes nothing; a management token may do everything.
func TestJobEndpointsNeedTheirCapabilities(t *testing.T) {
	t.Parallel()
	f := newACLTokens(t, testPolicies, nil)
	s := f.s
	register := func(token string, job *structs.Job) error {
		return userRPC(s, "Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: write(token)}, &structs.JobRegisterResponse{})
	}

	for _, who := range []string{"", "reader", "dispatcher", "elsewhere", "noder"} {
		before := latestIndex(t, s)
		requireDenied(t, "register as "+who, register(f.secret[who], jobIn("default", "web")))
		if latestIndex(t, s) != before {
			t.Fatalf("a refused register as %q wrote to raft", who)
		}
	}
	if j, _ := s.State().JobByID(nil, "default", "web"); j != nil {
		t.Fatal("a refused register stored the job")
	}
	// A job is checked against the namespace it goes into, the job's own
	// or, for a job in the default one, the request's.
	requireDenied(t, "writer into namespace other", register(f.secret["writer"], jobIn("other", "web")))
	req := &structs.JobRegisterRequest{Job: jobIn("default", "web"), WriteRequest: write(f.secret["writer"])}
	req.Namespace = "other"
	requireDenied(t, "writer with ?namespace=other", userRPC(s, "Job.Register", req, &structs.JobRegisterResponse{}))
	// Found from outside: "*" is how a request names every namespace,
	// and a token allowed anything in one namespace is allowed it in
	// "*". A writer of the default namespace put a job into namespace
	// "*", and a token of namespace "other" could then read and stop it.
	// No job may be in "*", however the request names it.
	for _, req := range []*structs.JobRegisterRequest{
		{Job: jobIn("*", "star"), WriteRequest: write(f.secret["writer"])},
		{Job: jobIn("default", "star"), WriteRequest: structs.WriteRequest{Namespace: "*", AuthToken: f.secret["writer"]}},
		{Job: jobIn("*", "star"), WriteRequest: structs.WriteRequest{Namespace: "*", AuthToken: f.mgmt}},
	} {
		before := latestIndex(t, s)
		err := userRPC(s, "Job.Register", req, &structs.JobRegisterResponse{})
		if err == nil || !strings.Contains(err.Error(), `namespace "*"`) {
			t.Fatalf("a job into namespace * (request namespace %q): got %v, want a refusal naming the namespace", req.Namespace, err)
		}
		if latestIndex(t, s) != before {
			t.Fatal("a refused register into namespace * wrote to raft")
		}
	}
	if err := register(f.secret["elsewhere"], jobIn("other", "away")); err != nil {
		t.Fatalf("elsewhere into its namespace: %v", err)
	}
	if err := register(f.secret["writer"], jobIn("default", "web")); err != nil {
		t.Fatalf("writer: %v", err)
	}
	param := jobIn("default", "param")
	param.Type = structs.JobTypeBatch
	param.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadForbidden}
	if err := register(f.mgmt, param); err != nil {
		t.Fatalf("management: %v", err)
	}

	// Reads need read-job; a list answers only what the token may list.
	get := func(token, ns, id string) error {
		args := &structs.JobSpecificRequest{JobID: id, QueryOptions: query(token)}
		args.Namespace = ns
		return userRPC(s, "Job.GetJob", args, &structs.SingleJobResponse{})
	}
	if err := get(f.secret["reader"], "default", "web"); err != nil {
		t.Fatalf("reader reads: %v", err)
	}
	requireDenied(t, "elsewhere reads default", get(f.secret["elsewhere"], "default", "web"))
	requireDenied(t, "anonymous reads", get("", "default", "web"))
	requireDenied(t, "dispatcher reads", get(f.secret["dispatcher"], "default", "web"))
	for _, m := range []string{"Job.Summary", "Job.Allocations", "Job.Evaluations", "Job.Deployments", "Job.LatestDeployment"} {
		args := &structs.JobSpecificRequest{JobID: "web", QueryOptions: query(f.secret["elsewhere"])}
		requireDenied(t, m, userRPC(s, m, args, newReply(t, s, m)))
		args.AuthToken = f.secret["reader"]
		if err := userRPC(s, m, args, newReply(t, s, m)); err != nil {
			t.Fatalf("%s as reader: %v", m, err)
		}
	}
	list := func(token, ns string) ([]string, error) {
		args := &structs.JobListRequest{QueryOptions: query(token)}
		args.Namespace = ns
		var out structs.JobListResponse
		err := userRPC(s, "Job.List", args, &out)
		var ids []string
		for _, j := range out.Jobs {
			ids = append(ids, j.Namespace+"/"+j.ID)
		}
		return ids, err
	}
	if ids, err := list(f.secret["reader"], "*"); err != nil || len(ids) != 2 || ids[0] != "default/param" || ids[1] != "default/web" {
		t.Fatalf("reader lists every namespace: %v %v; want only default's jobs", ids, err)
	}
	if ids, err := list(f.secret["elsewhere"], "*"); err != nil || len(ids) != 1 || ids[0] != "other/away" {
		t.Fatalf("elsewhere lists every namespace: %v %v; want only other's job", ids, err)
	}
	if ids, err := list(f.mgmt, "*"); err != nil || len(ids) != 3 {
		t.Fatalf("management lists %v %v", ids, err)
	}
	_, err := list(f.secret["elsewhere"], "default")
	requireDenied(t, "elsewhere lists default", err)
	_, err = list("", "*")
	requireDenied(t, "anonymous lists", err)

	// Dispatch needs dispatch-job, scaling scale-job (or submit-job),
	// reading the scale status read-job-scaling (or read-job).
	dispatch := func(token string) error {
		return userRPC(s, "Job.Dispatch", &structs.JobDispatchRequest{JobID: "param", WriteRequest: write(token)}, &structs.JobDispatchResponse{})
	}
	requireDenied(t, "reader dispatches", dispatch(f.secret["reader"]))
	if err := dispatch(f.secret["dispatcher"]); err != nil {
		t.Fatalf("dispatcher: %v", err)
	}
	scale := func(token string) error {
		count := int64(2)
		args := &structs.JobScaleRequest{JobID: "web", Target: map[string]string{structs.ScalingTargetGroup: "web"}, Count: &count,
			WriteRequest: write(token)}
		return userRPC(s, "Job.Scale", args, &structs.JobRegisterResponse{})
	}
	before := latestIndex(t, s)
	requireDenied(t, "reader scales", scale(f.secret["reader"]))
	if latestIndex(t, s) != before {
		t.Fatal("a refused scale wrote")
	}
	if err := scale(f.secret["scaler"]); err != nil {
		t.Fatalf("scaler: %v", err)
	}
	for _, who := range []string{"scaler", "reader"} {
		args := &structs.JobScaleStatusRequest{JobID: "web", QueryOptions: query(f.secret[who])}
		if err := userRPC(s, "Job.ScaleStatus", args, &structs.JobScaleStatusResponse{}); err != nil {
			t.Fatalf("scale status as %s: %v", who, err)
		}
	}

	// Plan, evaluate, stable, revert and stop need submit-job.
	plan := &structs.JobPlanRequest{Job: jobIn("default", "web"), WriteRequest: write(f.secret["reader"])}
	requireDenied(t, "reader plans", userRPC(s, "Job.Plan", plan, &structs.JobPlanResponse{}))
	plan.AuthToken = f.secret["writer"]
	if err := userRPC(s, "Job.Plan", plan, &structs.JobPlanResponse{}); err != nil {
		t.Fatalf("writer plans: %v", err)
	}
	for _, c := range []struct {
		method string
		args   any
		reply  any
	}{
		{"Job.Evaluate", &structs.JobEvaluateRequest{JobID: "web", WriteRequest: write(f.secret["reader"])}, &structs.JobRegisterResponse{}},
		{"Job.Stable", &structs.JobStabilityRequest{JobID: "web", JobVersion: 0, Stable: true, WriteRequest: write(f.secret["reader"])}, &structs.GenericResponse{}},
		{"Job.Revert", &structs.JobRevertRequest{JobID: "web", JobVersion: 0, WriteRequest: write(f.secret["reader"])}, &structs.JobRegisterResponse{}},
		{"Job.Deregister", &structs.JobDeregisterRequest{JobID: "web", WriteRequest: write(f.secret["reader"])}, &structs.JobDeregisterResponse{}},
	} {
		before := latestIndex(t, s)
		requireDenied(t, c.method+" as reader", userRPC(s, c.method, c.args, c.reply))
		if latestIndex(t, s) != before {
			t.Fatalf("a refused %s wrote", c.method)
		}
	}
	stop := &structs.JobDeregisterRequest{JobID: "web", WriteRequest: write(f.secret["writer"])}
	if err := userRPC(s, "Job.Deregister", stop, &structs.JobDeregisterResponse{}); err != nil {
		t.Fatalf("writer stops: %v", err)
	}
	if j, _ := s.State().JobByID(nil, "default", "web"); j == nil || !j.Stop {
		t.Fatal("the writer's stop did not stop the job")
	}
}

// newReply is a fresh reply value for method.
func newReply(t *testing.T, s *Server, method string) any {
	t.Helper()
	_, reply, err := s.rpcServer.NewCallValues(method)
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

// An unknown or expired token is Nomad's "ACL token not found" on every
// endpoint, not the anonymous policy.
func TestUnknownAndExpiredTokensAreNotFound(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := aclServer(t, func(c *Config) { c.Clock = clock })
	boot := bootstrapACL(t, s)
	upsertPolicy(t, s, boot.SecretID, structs.AnonymousACLPolicy, `namespace "default" { policy = "read" }`)
	upsertPolicy(t, s, boot.SecretID, "reader", `namespace "default" { policy = "read" }`)
	tok := createToken(t, s, boot.SecretID, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"reader"}, ExpirationTTL: time.Hour})
	read := func(token string) error {
		return userRPC(s, "Job.List", &structs.JobListRequest{QueryOptions: query(token)}, &structs.JobListResponse{})
	}
	if err := read(""); err != nil {
		t.Fatalf("the anonymous policy allows reading: %v", err)
	}
	if err := read(tok.SecretID); err != nil {
		t.Fatalf("a live token: %v", err)
	}
	requireErr(t, read(structs.GenerateUUID()), structs.ErrTokenNotFound)
	clock.Advance(2 * time.Hour)
	requireErr(t, read(tok.SecretID), structs.ErrTokenNotFound)
	reg := &structs.JobRegisterRequest{Job: itJob("web", 1), WriteRequest: write(tok.SecretID)}
	requireErr(t, userRPC(s, "Job.Register", reg, &structs.JobRegisterResponse{}), structs.ErrTokenNotFound)
}

// RejectJobRegistration refuses every submitter but a management token,
// as in Nomad.
func TestRejectJobRegistrationExemptsManagementTokens(t *testing.T) {
	f := newACLTokens(t, map[string]string{"writer": testPolicies["writer"]}, nil)
	s := f.s
	cfg := &structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{RejectJobRegistration: true}, WriteRequest: write(f.mgmt)}
	if err := userRPC(s, "Operator.SchedulerSetConfiguration", cfg, &structs.SchedulerSetConfigurationResponse{}); err != nil {
		t.Fatal(err)
	}
	reg := func(token, id string) error {
		return userRPC(s, "Job.Register", &structs.JobRegisterRequest{Job: itJob(id, 1), WriteRequest: write(token)}, &structs.JobRegisterResponse{})
	}
	if err := reg(f.secret["writer"], "w"); !errors.Is(err, structs.ErrJobRegistrationDisabled) {
		t.Fatalf("a client token while registration is rejected: %v", err)
	}
	if err := reg(f.mgmt, "m"); err != nil {
		t.Fatalf("a management token while registration is rejected: %v", err)
	}
}

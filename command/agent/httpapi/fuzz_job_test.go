package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/jobspec"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

// registerAllocBudget bounds what the agent may allocate for one register
// request: decoding, canonicalizing, converting and validating the job,
// and the server's side of it down to the state store. Canonicalize gives
// every group and task their defaults, so a byte of JSON ("{}" as one more
// task group) may legitimately cost a few KiB.
func registerAllocBudget(bodyLen int) uint64 {
	return 32<<20 + 8<<10*uint64(bodyLen)
}

// FuzzJobRegister sends arbitrary bodies to PUT /v1/jobs, the way any
// HTTP client can, and follows an accepted job down the path a real one
// takes: the RPC to a server, the server's own checks, the raft entry, the
// state store, and a snapshot and restore as at a restart. Whatever the
// body:
//
//   - the answer is 200 or a 400 that says what is wrong, never a panic
//     or a 500;
//   - the request allocates at most registerAllocBudget;
//   - /v1/validate/job agrees: it reports no problem for a job the
//     register accepted, and some problem for a job it refused as invalid;
//   - a job crosses the RPC unchanged, is admitted or refused by the
//     server's one admission (nomad.CanonicalJob), is stored by the FSM
//     without error once admitted, and
//     comes back from a snapshot restore as it was stored. A job that
//     passes validation but cannot be stored or restored would be poison:
//     accepted once, then failing on every server start.
func FuzzJobRegister(f *testing.F) {
	for _, seed := range registerSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var registered *structs.JobRegisterRequest
		s := &httpAPI{
			rpc: fakeRPC{
				"Job.Register": func(args, reply any) error {
					registered = args.(*structs.JobRegisterRequest)
					return fuzzServerRegister(t, registered)
				},
				"Job.Validate": fuzzServerValidate,
			},
			logger: hclog.NewNullLogger(),
			info:   func() AgentInfo { return AgentInfo{Config: config.Dev()} },
		}
		h := s.handler()

		before := fuzzseed.AllocatedBytes()
		code, msg := serve(h, http.MethodPut, "/v1/jobs", body)
		if used, budget := fuzzseed.AllocatedBytes()-before, registerAllocBudget(len(body)); used > budget {
			t.Fatalf("registering a %d-byte body allocated %d MiB, more than the %d MiB budget",
				len(body), used>>20, budget>>20)
		}
		switch code {
		case http.StatusOK:
			if registered == nil {
				t.Fatalf("200 without a Job.Register RPC: %s", msg)
			}
		case http.StatusBadRequest:
			if strings.TrimSpace(msg) == "" {
				t.Fatal("a 400 that does not say what is wrong")
			}
		default:
			t.Fatalf("status %d for a job body: %s", code, msg)
		}

		vcode, vmsg := serve(h, http.MethodPut, "/v1/validate/job", body)
		if vcode != http.StatusOK {
			if code == http.StatusOK {
				t.Fatalf("register accepted the body, validate answered %d: %s", vcode, vmsg)
			}
			return
		}
		var verdict api.JobValidateResponse
		if err := json.Unmarshal([]byte(vmsg), &verdict); err != nil {
			t.Fatalf("validate answered 200 with a body that is not a JobValidateResponse: %v\n%s", err, vmsg)
		}
		switch {
		case code == http.StatusOK && len(verdict.ValidationErrors) > 0:
			t.Fatalf("register accepted the job, validate finds problems: %q", verdict.ValidationErrors)
		case code == http.StatusBadRequest && strings.HasPrefix(msg, "invalid job:") && len(verdict.ValidationErrors) == 0:
			t.Fatalf("register refused the job (%s), validate finds no problem", msg)
		}
	})
}

// fuzzServerRegister is what a server does with a Job.Register RPC up to
// and including the raft apply (nomad.Job.Register, whose checks it
// repeats; the endpoint itself needs a whole raft server), plus the trip
// through a snapshot that a restart makes. Its failures are test failures
// except the ones a server answers with a 400.
func fuzzServerRegister(t *testing.T, args *structs.JobRegisterRequest) error {
	t.Helper()
	// The agent reaches the server over RPC: the server sees the decoded
	// copy, which must be the request that was sent.
	wire, err := rpcx.Encode(args)
	if err != nil {
		t.Fatalf("a validated register request cannot be encoded for RPC: %v", err)
	}
	var got structs.JobRegisterRequest
	if err := rpcx.Decode(wire, &got); err != nil {
		t.Fatalf("a validated register request does not decode: %v", err)
	}
	if !structs.DeepEqual(args, &got) {
		t.Fatalf("the register request changed on its way over RPC:\nsent     %s\nreceived %s", dump(args), dump(&got))
	}

	// The server admits the job (nomad.Job.Register's admitJob, less the
	// size limits): its refusal is the 400 the HTTP API answers.
	job, err := nomad.CanonicalJob(got.Job, got.Job.Namespace)
	if err != nil {
		return err
	}
	// IDs and times arrive in the entry, as the endpoint makes them.
	entry := &structs.JobRegisterRequest{Job: job, WriteRequest: got.WriteRequest}
	job.SubmitTime = 1_700_000_000_000_000_000
	if !job.IsPeriodic() && !job.IsParameterized() {
		entry.Eval = &structs.Evaluation{
			ID: "00000000-0000-0000-0000-000000000001", Namespace: job.Namespace, Priority: job.Priority,
			Type: job.Type, TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID,
			Status: structs.EvalStatusPending, CreateTime: job.SubmitTime, ModifyTime: job.SubmitTime,
		}
	}
	data, err := rpcx.Encode(entry)
	if err != nil {
		t.Fatalf("a validated job cannot be encoded as a raft entry: %v", err)
	}
	fsm := newFuzzFSM(t)
	if resp := fsm.Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: append([]byte{byte(structs.JobRegisterRequestType)}, data...)}); resp != nil {
		t.Fatalf("the FSM refused a validated job: %v", resp)
	}
	stored, err := fsm.State().JobByID(nil, job.Namespace, job.ID)
	if err != nil || stored == nil {
		t.Fatalf("the job is not in the state store after its entry applied: %v", err)
	}

	snap, err := fsm.Snapshot()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	sink := &bufferSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatalf("a snapshot holding the job cannot be written: %v", err)
	}
	restored := newFuzzFSM(t)
	if err := restored.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatalf("a snapshot holding the job cannot be restored: %v", err)
	}
	back, err := restored.State().JobByID(nil, job.Namespace, job.ID)
	if err != nil || back == nil {
		t.Fatalf("the job is missing after a snapshot restore: %v", err)
	}
	if !structs.DeepEqual(stored, back) {
		t.Fatalf("the job changed in a snapshot restore:\nstored   %s\nrestored %s", dump(stored), dump(back))
	}
	return nil
}

// fuzzServerValidate is what a server does with a Job.Validate RPC
// (nomad.Job.Validate, less the ACL check and the size limits).
func fuzzServerValidate(args, reply any) error {
	a := args.(*structs.JobValidateRequest)
	_, err := nomad.CanonicalJob(a.Job, a.Job.Namespace)
	*reply.(*structs.JobValidateResponse) = nomad.ValidationAnswer(err)
	return nil
}

func newFuzzFSM(t *testing.T) *fsm.FSM {
	t.Helper()
	f, err := fsm.New(hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// bufferSink is a raft.SnapshotSink in memory.
type bufferSink struct{ bytes.Buffer }

func (*bufferSink) ID() string    { return "fuzz" }
func (*bufferSink) Cancel() error { return nil }
func (*bufferSink) Close() error  { return nil }

// serve runs one request through the handler in memory.
func serve(h http.Handler, method, path string, body []byte) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, bytes.NewReader(body)))
	return rec.Code, rec.Body.String()
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// registerSeeds are register bodies as the CLI and Nomad's Go client send
// them: every job file of the repository parsed and wrapped, the API JSON
// files, and the jobs the HTTP tests register.
func registerSeeds(tb testing.TB) [][]byte {
	wrap := func(job any) []byte {
		b, err := json.Marshal(map[string]any{"Job": job})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	var seeds [][]byte
	for _, src := range fuzzseed.Files(tb,
		"../../../examples/*.hcl",
		"../../../jobspec/testdata/*.hcl",
		"../testdata/nomad-jobs/*.hcl",
	) {
		if !bytes.Contains(src, []byte(`job "`)) {
			continue // another kind of file among the examples (an ACL policy)
		}
		job, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: "seed.hcl", Body: src})
		if err != nil {
			tb.Fatalf("a seed job file does not parse: %v", err)
		}
		seeds = append(seeds, wrap(job))
	}
	seeds = append(seeds, fuzzseed.Files(tb, "../../../jobspec/testdata/*.json")...)

	rich := richNomadJob("rich", "hello")
	rich.Canonicalize()
	seeds = append(seeds,
		wrap(mockJob("mock", 2)),
		wrap(richNomadJob("rich", "hello")),
		wrap(rich),
		mustMarshal(tb, nomadapi.JobRegisterRequest{Job: richNomadJob("cas", "x"), EnforceIndex: true, JobModifyIndex: 3}),
		[]byte(`{"Job": null}`),
		[]byte(`{"Job": {"ID": "x", "TaskGroups": [{}]}}`),
	)
	return seeds
}

func mustMarshal(tb testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

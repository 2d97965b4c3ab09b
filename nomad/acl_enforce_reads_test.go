package nomad

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// aclWorld is newACLTokens with a node and a placed job in each of the
// namespaces default and other.
type aclWorld struct {
	*aclTokens
	node                 *structs.Node
	defAlloc, otherAlloc *structs.Allocation
	deployment           map[string]string // namespace -> deployment ID
}

func newACLWorld(t *testing.T) *aclWorld {
	t.Helper()
	// Workers place the allocs. The node's TTL outlasts any test, so no
	// missed heartbeat writes while a test checks that a refused request
	// wrote nothing.
	tokens := newACLTokens(t, testPolicies, func(c *Config) {
		c.NumSchedulers = 1
		c.MinHeartbeatTTL = time.Hour
	})
	w := &aclWorld{aclTokens: tokens, node: itNode("n1"), deployment: map[string]string{}}
	s := w.s
	registerNode(t, s, w.node)
	for _, j := range []*structs.Job{jobIn("default", "web"), jobIn("other", "away")} {
		registerJob(t, s, withTestServices(j))
		// Drover's schedulers make no deployments yet; one is written the
		// way a plan would write it.
		d := &structs.Deployment{ID: structs.GenerateUUID(), Namespace: j.Namespace, JobID: j.ID, Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
		if _, _, err := s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Deployment: d}); err != nil {
			t.Fatal(err)
		}
		w.deployment[j.Namespace] = d.ID
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		w.defAlloc, w.otherAlloc = nil, nil
		it, _ := s.State().Allocs(nil)
		for raw := it.Next(); raw != nil; raw = it.Next() {
			a := raw.(*structs.Allocation)
			if a.Namespace == "default" {
				w.defAlloc = a
			} else {
				w.otherAlloc = a
			}
		}
		return w.defAlloc != nil && w.otherAlloc != nil, "allocs not placed in both namespaces yet"
	})
	for _, ns := range []string{"default", "other"} {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			evals, _ := s.State().EvalsByJob(nil, ns, map[string]string{"default": "web", "other": "away"}[ns])
			for _, e := range evals {
				if e.Status != structs.EvalStatusComplete {
					return false, "eval " + e.ID + " " + e.Status
				}
			}
			return len(evals) > 0, "no evals"
		})
	}
	return w
}

func (w *aclWorld) token(t *testing.T, policies ...string) string {
	t.Helper()
	return createToken(t, w.s, w.mgmt, &structs.ACLToken{Type: structs.ACLClientToken, Policies: policies}).SecretID
}

func namespaces[T any](list []T, ns func(T) string) []string {
	seen := map[string]bool{}
	for _, x := range list {
		seen[ns(x)] = true
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Allocation, evaluation and deployment reads answer only what the token
// may read (read-job in the object's namespace); a list over every
// namespace is filtered, a read of one object outside is refused.
func TestReadsAnswerOnlyTheNamespacesATokenMayRead(t *testing.T) {
	t.Parallel()
	w := newACLWorld(t)
	s := w.s
	reader, elsewhere := w.secret["reader"], w.secret["elsewhere"]

	allocNS := func(token, ns string) ([]string, error) {
		args := &structs.AllocListRequest{QueryOptions: query(token)}
		args.Namespace = ns
		var out structs.AllocListResponse
		err := userRPC(s, "Alloc.List", args, &out)
		return namespaces(out.Allocations, func(a *structs.AllocListStub) string { return a.Namespace }), err
	}
	evalNS := func(token, ns string) ([]string, error) {
		args := &structs.EvalListRequest{QueryOptions: query(token)}
		args.Namespace = ns
		var out structs.EvalListResponse
		err := userRPC(s, "Eval.List", args, &out)
		return namespaces(out.Evaluations, func(e *structs.Evaluation) string { return e.Namespace }), err
	}
	depNS := func(token, ns string) ([]string, error) {
		args := &structs.GenericRequest{QueryOptions: query(token)}
		args.Namespace = ns
		var out structs.DeploymentListResponse
		err := userRPC(s, "Deployment.List", args, &out)
		return namespaces(out.Deployments, func(d *structs.Deployment) string { return d.Namespace }), err
	}
	for what, list := range map[string]func(token, ns string) ([]string, error){"allocs": allocNS, "evals": evalNS, "deployments": depNS} {
		for token, want := range map[string]string{reader: "[default]", elsewhere: "[other]", w.mgmt: "[default other]"} {
			got, err := list(token, "*")
			if err != nil || fmt.Sprint(got) != want {
				t.Errorf("%s over every namespace: namespaces %v, %v; want %s", what, got, err, want)
			}
		}
		_, err := list(reader, "other")
		requireDenied(t, what+" of another namespace", err)
		_, err = list("", "*")
		requireDenied(t, what+" without a token", err)
	}

	get := func(token, id string) error {
		return userRPC(s, "Alloc.GetAlloc", &structs.AllocSpecificRequest{AllocID: id, QueryOptions: query(token)}, &structs.SingleAllocResponse{})
	}
	if err := get(reader, w.defAlloc.ID); err != nil {
		t.Fatalf("reader reads its alloc: %v", err)
	}
	requireDenied(t, "reader reads another namespace's alloc", get(reader, w.otherAlloc.ID))
	requireDenied(t, "anonymous reads an alloc", get("", structs.GenerateUUID()))
	var many structs.AllocsGetResponse
	if err := userRPC(s, "Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: []string{w.defAlloc.ID, w.otherAlloc.ID}, QueryOptions: query(reader)}, &many); err != nil ||
		len(many.Allocs) != 1 || many.Allocs[0].ID != w.defAlloc.ID {
		t.Fatalf("reader fetches both allocs: %d answered, %v; want only its own", len(many.Allocs), err)
	}
	evalGet := func(token, id string) error {
		return userRPC(s, "Eval.GetEval", &structs.EvalSpecificRequest{EvalID: id, QueryOptions: query(token)}, &structs.SingleEvalResponse{})
	}
	if err := evalGet(reader, w.defAlloc.EvalID); err != nil {
		t.Fatalf("reader reads its eval: %v", err)
	}
	requireDenied(t, "reader reads another namespace's eval", evalGet(reader, w.otherAlloc.EvalID))
	depGet := func(token, id string) error {
		return userRPC(s, "Deployment.GetDeployment", &structs.DeploymentSpecificRequest{DeploymentID: id, QueryOptions: query(token)}, &structs.SingleDeploymentResponse{})
	}
	if err := depGet(reader, w.deployment["default"]); err != nil {
		t.Fatalf("reader reads its deployment: %v", err)
	}
	requireDenied(t, "reader reads another namespace's deployment", depGet(reader, w.deployment["other"]))
	var ea structs.EvalAllocationsResponse
	if err := userRPC(s, "Eval.Allocations", &structs.EvalSpecificRequest{EvalID: w.otherAlloc.EvalID, QueryOptions: query(reader)}, &ea); err != nil || len(ea.Allocations) != 0 {
		t.Fatalf("reader lists another namespace's eval's allocs: %d, %v", len(ea.Allocations), err)
	}

	// Stopping an alloc needs alloc-lifecycle in its namespace.
	stop := func(token, id string) error {
		return userRPC(s, "Alloc.Stop", &structs.AllocStopRequest{AllocID: id, WriteRequest: write(token)}, &structs.AllocStopResponse{})
	}
	before := latestIndex(t, s)
	requireDenied(t, "reader stops an alloc", stop(reader, w.defAlloc.ID))
	requireDenied(t, "lifecycle stops another namespace's alloc", stop(w.secret["lifecycle"], w.otherAlloc.ID))
	if latestIndex(t, s) != before {
		t.Fatal("a refused stop wrote")
	}
	if err := stop(w.secret["lifecycle"], w.defAlloc.ID); err != nil {
		t.Fatalf("lifecycle stops: %v", err)
	}
}

// Nodes need node read to read and node write to change; a node's
// allocations are also filtered by read-job, as in Nomad.
func TestNodeEndpointsNeedTheNodePolicy(t *testing.T) {
	t.Parallel()
	w := newACLWorld(t)
	s := w.s
	noder, nodewriter, reader := w.secret["noder"], w.secret["nodewriter"], w.secret["reader"]
	both := w.token(t, "noder", "reader")

	for token, allowed := range map[string]bool{noder: true, nodewriter: true, reader: false, "": false} {
		errs := []error{
			userRPC(s, "Node.List", &structs.NodeListRequest{QueryOptions: query(token)}, &structs.NodeListResponse{}),
			userRPC(s, "Node.GetNode", &structs.NodeSpecificRequest{NodeID: w.node.ID, QueryOptions: query(token)}, &structs.SingleNodeResponse{}),
		}
		for _, err := range errs {
			if allowed && err != nil {
				t.Fatalf("reading nodes with node read: %v", err)
			}
			if !allowed {
				requireDenied(t, "reading nodes without node read", err)
			}
		}
	}
	allocs := func(token string) []*structs.Allocation {
		var out structs.NodeAllocsResponse
		if err := userRPC(s, "Node.GetAllocs", &structs.NodeSpecificRequest{NodeID: w.node.ID, QueryOptions: query(token)}, &out); err != nil {
			t.Fatalf("node allocs: %v", err)
		}
		return out.Allocs
	}
	if got := allocs(noder); len(got) != 0 {
		t.Fatalf("node read alone sees %d allocs; want none (no namespace)", len(got))
	}
	if got := allocs(both); len(got) != 1 || got[0].ID != w.defAlloc.ID {
		t.Fatalf("node read and default read see %d allocs; want only the default one", len(got))
	}

	changes := map[string]struct {
		args, reply any
	}{
		"Node.UpdateEligibility": {&structs.NodeUpdateEligibilityRequest{NodeID: w.node.ID, Eligibility: structs.NodeSchedulingIneligible}, &structs.NodeEligibilityUpdateResponse{}},
		"Node.UpdateDrain":       {&structs.NodeUpdateDrainRequest{NodeID: w.node.ID, DrainStrategy: &structs.DrainStrategy{}}, &structs.NodeDrainUpdateResponse{}},
		"Node.Evaluate":          {&structs.NodeEvaluateRequest{NodeID: w.node.ID}, &structs.NodeUpdateResponse{}},
		"Node.Deregister":        {&structs.NodeDeregisterRequest{NodeID: w.node.ID}, &structs.NodeUpdateResponse{}},
	}
	for m, c := range changes {
		c.args.(interface{ SetRequestAuthToken(string) }).SetRequestAuthToken(noder)
		before := latestIndex(t, s)
		requireDenied(t, m+" with node read", userRPC(s, m, c.args, c.reply))
		if latestIndex(t, s) != before {
			t.Fatalf("a refused %s wrote", m)
		}
	}
	elig := changes["Node.UpdateEligibility"].args.(*structs.NodeUpdateEligibilityRequest)
	elig.AuthToken = nodewriter
	if err := userRPC(s, "Node.UpdateEligibility", elig, &structs.NodeEligibilityUpdateResponse{}); err != nil {
		t.Fatalf("node write: %v", err)
	}
	if n, _ := s.State().NodeByID(nil, w.node.ID); n.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatal("the node write did not apply")
	}
}

// Operator reads need operator read, changes operator write; garbage
// collection and the KV test endpoint need a management token.
func TestOperatorSystemAndKVNeedTheirPolicies(t *testing.T) {
	t.Parallel()
	f := newACLTokens(t, testPolicies, nil)
	s := f.s
	opreader, opwriter := f.secret["opreader"], f.secret["opwriter"]
	for _, m := range []string{"Operator.RaftGetConfiguration", "Operator.SchedulerGetConfiguration"} {
		if err := userRPC(s, m, &structs.GenericRequest{QueryOptions: query(opreader)}, newReply(t, s, m)); err != nil {
			t.Fatalf("%s with operator read: %v", m, err)
		}
		requireDenied(t, m+" without", userRPC(s, m, &structs.GenericRequest{QueryOptions: query(f.secret["reader"])}, newReply(t, s, m)))
	}
	set := func(token string) error {
		args := &structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread}, WriteRequest: write(token)}
		return userRPC(s, "Operator.SchedulerSetConfiguration", args, &structs.SchedulerSetConfigurationResponse{})
	}
	before := latestIndex(t, s)
	requireDenied(t, "set the scheduler configuration with operator read", set(opreader))
	requireDenied(t, "remove a raft peer with operator read", userRPC(s, "Operator.RaftRemovePeer",
		&structs.RaftPeerAddRequest{ID: s.NodeID(), WriteRequest: write(opreader)}, &structs.GenericResponse{}))
	requireDenied(t, "garbage collect with operator write", userRPC(s, "System.GarbageCollect", &structs.GenericRequest{QueryOptions: query(opwriter)}, &structs.GenericResponse{}))
	requireDenied(t, "KV write with operator write", userRPC(s, "KV.Write", &structs.GenericWriteRequest{Key: "k", Value: "v", WriteRequest: write(opwriter)}, &structs.GenericResponse{}))
	requireDenied(t, "KV read with operator write", userRPC(s, "KV.Read", &structs.GenericReadRequest{Key: "k", QueryOptions: query(opwriter)}, &structs.GenericReadResponse{}))
	if latestIndex(t, s) != before {
		t.Fatal("a refused operator call wrote")
	}
	if err := set(opwriter); err != nil {
		t.Fatalf("operator write: %v", err)
	}
	if err := userRPC(s, "System.GarbageCollect", &structs.GenericRequest{QueryOptions: query(f.mgmt)}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("management collects: %v", err)
	}
	if err := userRPC(s, "KV.Write", &structs.GenericWriteRequest{Key: "k", Value: "v", WriteRequest: write(f.mgmt)}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("management writes KV: %v", err)
	}
}

// Alloc.Locate tells an agent where to send a client request: the token
// needs only the capability of that request, in the alloc's namespace.
func TestAllocLocateNeedsOnlyTheClientCapability(t *testing.T) {
	t.Parallel()
	w := newACLWorld(t)
	s := w.s
	logs := w.token(t, "lifecycle")
	upsertPolicy(t, s, w.mgmt, "logs", `namespace "default" { capabilities = ["read-logs"] }`)
	logReader := w.token(t, "logs")
	locate := func(token, id string, caps ...string) (*structs.AllocLocateResponse, error) {
		var out structs.AllocLocateResponse
		err := userRPC(s, "Alloc.Locate", &structs.AllocLocateRequest{AllocID: id, Capabilities: caps, QueryOptions: query(token)}, &out)
		return &out, err
	}
	out, err := locate(logReader, w.defAlloc.ID[:8], "read-logs", "read-fs")
	if err != nil || out.AllocID != w.defAlloc.ID || out.NodeID != w.node.ID || out.Namespace != "default" {
		t.Fatalf("read-logs locates its alloc by prefix: %+v, %v", out, err)
	}
	_, err = locate(logReader, w.otherAlloc.ID, "read-logs")
	requireDenied(t, "read-logs in another namespace", err)
	// Found from outside: a prefix that matched only another namespace's
	// allocation answered 403 naming that namespace, and one that matched
	// nothing 404, so a token could learn, a character at a time, the
	// IDs of allocations it may not see. A prefix finds only what the
	// token may act on.
	_, err = locate(logReader, w.otherAlloc.ID[:len(w.otherAlloc.ID)-1], "read-logs")
	if !errors.Is(err, structs.ErrNotFound) || strings.Contains(err.Error(), w.otherAlloc.Namespace) {
		t.Fatalf("a prefix of another namespace's allocation: got %v, want not found, naming no namespace", err)
	}
	_, err = locate(logs, w.defAlloc.ID, "read-logs")
	requireDenied(t, "alloc-lifecycle asking for read-logs", err)
	_, err = locate("", w.defAlloc.ID, "read-logs")
	requireDenied(t, "no token", err)
	if _, err := locate(w.mgmt, structs.GenerateUUID(), "read-fs"); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("an unknown alloc: %v", err)
	}
}

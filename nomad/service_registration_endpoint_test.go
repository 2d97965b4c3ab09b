package nomad

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// withTestServices gives j's group the nomad services the endpoint tests
// register ("web", "mine", "theirs", on port "http"): the servers accept
// only registrations of services the alloc's job has.
func withTestServices(j *structs.Job) *structs.Job {
	for _, name := range []string{"web", "mine", "theirs"} {
		j.TaskGroups[0].Services = append(j.TaskGroups[0].Services,
			&structs.Service{Name: name, PortLabel: "http", Provider: structs.ServiceProviderNomad})
	}
	return j
}

func endpointReg(alloc *structs.Allocation, name string) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID:          fmt.Sprintf("_nomad-task-%s-group-web-%s-http", alloc.ID, name),
		ServiceName: name, AllocID: alloc.ID, Address: "127.0.0.1", Port: 8080, Tags: []string{"v1"},
		// What a client says of these is overridden by the servers.
		NodeID: "somewhere-else", JobID: "some-other-job",
	}
}

func regsOf(t *testing.T, s *Server, allocID string) []*structs.ServiceRegistration {
	t.Helper()
	regs, err := s.State().ServiceRegistrationsByAllocID(nil, allocID)
	if err != nil {
		t.Fatal(err)
	}
	return regs
}

// A node registers and deletes only its own allocs' services: a forged
// call, naming another node's alloc or registration, or without the
// node's secret, is refused whole and changes nothing.
func TestServiceRegistrationOnlyForTheCallingNodesAllocs(t *testing.T) {
	f := newIdentityFixture(t)
	upsert := func(node *structs.Node, secret string, regs ...*structs.ServiceRegistration) error {
		var out structs.GenericResponse
		return f.call("ServiceRegistration.Upsert", &structs.ServiceRegistrationUpsertRequest{
			Services: regs, NodeID: node.ID, SecretID: secret}, &out)
	}
	deregister := func(node *structs.Node, ids ...string) error {
		var out structs.GenericResponse
		return f.call("ServiceRegistration.Deregister", &structs.ServiceRegistrationDeleteRequest{
			IDs: ids, NodeID: node.ID, SecretID: node.SecretID}, &out)
	}

	wantRefused(t, upsert(f.own, f.own.SecretID, endpointReg(f.ownAlloc, "mine"), endpointReg(f.victimAlloc, "theirs")),
		"a node may register only its own allocations' services")
	wantRefused(t, upsert(f.victim, f.own.SecretID, endpointReg(f.victimAlloc, "theirs")), "secret")
	if n := len(regsOf(t, f.s, f.ownAlloc.ID)) + len(regsOf(t, f.s, f.victimAlloc.ID)); n != 0 {
		t.Fatalf("refused upserts left %d registrations", n)
	}

	if err := upsert(f.victim, f.victim.SecretID, endpointReg(f.victimAlloc, "web")); err != nil {
		t.Fatal(err)
	}
	regs := regsOf(t, f.s, f.victimAlloc.ID)
	if len(regs) != 1 || regs[0].NodeID != f.victim.ID || regs[0].JobID != "victim-job" || regs[0].Datacenter != "dc1" {
		t.Fatalf("registrations = %+v, want one on node %s of job victim-job in dc1", regs, f.victim.ID)
	}
	wantRefused(t, deregister(f.own, regs[0].ID), "a node may delete only its own registrations")
	if len(regsOf(t, f.s, f.victimAlloc.ID)) != 1 {
		t.Fatal("a refused delete removed the registration")
	}
	// A retried delete of what is gone already is acknowledged.
	for i := 0; i < 2; i++ {
		if err := deregister(f.victim, regs[0].ID); err != nil {
			t.Fatalf("delete %d: %v", i, err)
		}
	}
	if len(regsOf(t, f.s, f.victimAlloc.ID)) != 0 {
		t.Fatal("the node's own delete left the registration")
	}
}

func TestServiceRegistrationUpsertBoundsAndValidatesTheRequest(t *testing.T) {
	f := newIdentityFixture(t)
	call := func(regs []*structs.ServiceRegistration) error {
		var out structs.GenericResponse
		return f.call("ServiceRegistration.Upsert", &structs.ServiceRegistrationUpsertRequest{
			Services: regs, NodeID: f.own.ID, SecretID: f.own.SecretID}, &out)
	}
	many := make([]*structs.ServiceRegistration, structs.MaxServiceRegistrationsPerRequest+1)
	for i := range many {
		many[i] = endpointReg(f.ownAlloc, fmt.Sprintf("s%d", i))
	}
	wantRefused(t, call(many), fmt.Sprintf("more than the %d allowed", structs.MaxServiceRegistrationsPerRequest))
	bad := endpointReg(f.ownAlloc, "web")
	bad.ServiceName = "web_1"
	wantRefused(t, call([]*structs.ServiceRegistration{endpointReg(f.ownAlloc, "ok"), bad}), "Services[1]")
	wantRefused(t, call(nil), "Services is empty")
	// A service the alloc's job does not have is dropped, and so is one
	// named unlike its ID's service.
	foreign := endpointReg(f.ownAlloc, "other")
	renamed := endpointReg(f.ownAlloc, "web")
	renamed.ServiceName = "mine"
	if err := call([]*structs.ServiceRegistration{foreign, renamed}); err != nil {
		t.Fatal(err)
	}
	bigTags := endpointReg(f.ownAlloc, "web")
	bigTags.Tags = make([]string, structs.MaxServiceTags+1)
	wantRefused(t, call([]*structs.ServiceRegistration{bigTags}), "Tags has")
	if n := len(regsOf(t, f.s, f.ownAlloc.ID)); n != 0 {
		t.Fatalf("refused upserts left %d registrations", n)
	}
}

// Reads need read-job in the service's namespace, and a delete needs
// submit-job there, as in Nomad.
func TestServiceRegistrationReadsAndDeletesNeedJobCapabilities(t *testing.T) {
	w := newACLWorld(t)
	for _, a := range []*structs.Allocation{w.defAlloc, w.otherAlloc} {
		var out structs.GenericResponse
		if err := w.s.RPC("ServiceRegistration.Upsert", &structs.ServiceRegistrationUpsertRequest{
			Services: []*structs.ServiceRegistration{endpointReg(a, "web")}, NodeID: w.node.ID, SecretID: w.node.SecretID}, &out); err != nil {
			t.Fatal(err)
		}
	}
	reader, writer := w.token(t, "reader"), w.token(t, "writer")

	list := func(token, ns string) ([]*structs.ServiceRegistrationListStub, error) {
		q := query(token)
		q.Namespace = ns
		var out structs.ServiceRegistrationListResponse
		err := w.s.RPC("ServiceRegistration.List", &structs.ServiceRegistrationListRequest{QueryOptions: q}, &out)
		return out.Services, err
	}
	stubs, err := list(reader, "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(stubs) != 1 || stubs[0].Namespace != "default" || len(stubs[0].Services) != 1 ||
		stubs[0].Services[0].ServiceName != "web" || strings.Join(stubs[0].Services[0].Tags, ",") != "v1" {
		t.Fatalf("reader's list over every namespace = %+v, want only default's web [v1]", stubs)
	}
	if _, err := list(w.token(t, "noder"), "default"); !errors.Is(err, structs.ErrPermissionDenied) {
		t.Fatalf("list with a token that may read no namespace: %v, want Permission denied", err)
	}

	get := func(token, ns string) ([]*structs.ServiceRegistration, error) {
		q := query(token)
		q.Namespace = ns
		var out structs.ServiceRegistrationByNameResponse
		err := w.s.RPC("ServiceRegistration.GetService", &structs.ServiceRegistrationByNameRequest{ServiceName: "web", QueryOptions: q}, &out)
		return out.Services, err
	}
	if regs, err := get(reader, "default"); err != nil || len(regs) != 1 || regs[0].AllocID != w.defAlloc.ID {
		t.Fatalf("reader's read of default/web = %+v, %v", regs, err)
	}
	if _, err := get(reader, "other"); !errors.Is(err, structs.ErrPermissionDenied) {
		t.Fatalf("reader's read in another namespace: %v, want Permission denied", err)
	}

	del := func(token string) error {
		wr := write(token)
		var out structs.GenericResponse
		return w.s.RPC("ServiceRegistration.DeleteByID", &structs.ServiceRegistrationDeleteByIDRequest{
			ServiceName: "web", ID: endpointReg(w.defAlloc, "web").ID, WriteRequest: wr}, &out)
	}
	if err := del(reader); !errors.Is(err, structs.ErrPermissionDenied) {
		t.Fatalf("reader's delete: %v, want Permission denied", err)
	}
	if len(regsOf(t, w.s, w.defAlloc.ID)) != 1 {
		t.Fatal("a refused delete removed the registration")
	}
	if err := del(writer); err != nil {
		t.Fatal(err)
	}
	if len(regsOf(t, w.s, w.defAlloc.ID)) != 0 {
		t.Fatal("the writer's delete left the registration")
	}
	if err := del(writer); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want not found", err)
	}
}

// A node reads the catalog for its own allocs' templates only; the read
// blocks until the registrations change.
func TestServiceRegistrationForAllocIsTheNodesOwnBlockingRead(t *testing.T) {
	f := newIdentityFixture(t)
	read := func(node *structs.Node, allocID string, minIndex uint64) (*structs.ServiceRegistrationByNameResponse, error) {
		var out structs.ServiceRegistrationByNameResponse
		err := f.call("ServiceRegistration.ForAlloc", &structs.ServiceRegistrationsForAllocRequest{AllocID: allocID,
			NodeID: node.ID, SecretID: node.SecretID, QueryOptions: structs.QueryOptions{MinQueryIndex: minIndex, MaxQueryTime: 10 * time.Second}}, &out)
		return &out, err
	}
	_, err := read(f.own, f.victimAlloc.ID, 0)
	wantRefused(t, err, "may read services only for its own allocations")

	first, err := read(f.own, f.ownAlloc.ID, 0)
	if err != nil || len(first.Services) != 0 {
		t.Fatalf("first read: %+v %v", first, err)
	}
	done := make(chan *structs.ServiceRegistrationByNameResponse, 1)
	go func() {
		out, err := read(f.own, f.ownAlloc.ID, first.Index)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	var out structs.GenericResponse
	if err := f.call("ServiceRegistration.Upsert", &structs.ServiceRegistrationUpsertRequest{
		Services: []*structs.ServiceRegistration{endpointReg(f.victimAlloc, "web")}, NodeID: f.victim.ID, SecretID: f.victim.SecretID}, &out); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		// Both jobs are in the default namespace: the victim's service is
		// in the catalog the attacker's templates may read, as in Nomad.
		if got == nil || len(got.Services) != 1 || got.Index <= first.Index {
			t.Fatalf("woken read = %+v, want the one new registration at a newer index", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking read was not woken by the upsert")
	}
}

package state

import (
	"strings"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// svcFixture is a store with job "web" and, on node n1, a running alloc a1
// (and a2 on n2) that each registered one service.
func svcFixture(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertNode(testNode("n2"), nil) }))
	job := mustJob(t, s, 3, testJob("web"))
	a1, a2 := testAlloc("a1", job, "n1"), testAlloc("a2", job, "n2")
	a2.Name = structs.AllocName(job.ID, "web", 1)
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a1, a2}) }))
	n, err := writeResult(s, 5, func(tx *Txn) (int, error) {
		return tx.UpsertServiceRegistrations([]*structs.ServiceRegistration{svcReg("a1"), svcReg("a2")})
	})
	mustNoErr(t, err)
	if n != 2 {
		t.Fatalf("wrote %d registrations, want 2", n)
	}
	return s
}

func svcReg(allocID string) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID: "_nomad-task-" + allocID + "-group-web-web-http", ServiceName: "web", AllocID: allocID,
		Address: "10.0.0.1", Port: 8080, Tags: []string{"v1"},
	}
}

func svcIDs(t *testing.T, s *StateStore) []string {
	t.Helper()
	regs, err := s.ServiceRegistrationsByName(nil, structs.DefaultNamespace, "web")
	mustNoErr(t, err)
	var ids []string
	for _, r := range regs {
		ids = append(ids, r.AllocID)
	}
	return ids
}

func wantSvcAllocs(t *testing.T, s *StateStore, want ...string) {
	t.Helper()
	if got := svcIDs(t, s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("registrations of allocs %v, want %v", got, want)
	}
}

func TestServiceRegistrationsTakeTheAllocsPlacement(t *testing.T) {
	s := svcFixture(t)
	r, err := s.ServiceRegistrationByID(nil, svcReg("a1").ID)
	mustNoErr(t, err)
	if r == nil || r.NodeID != "n1" || r.JobID != "web" || r.Namespace != structs.DefaultNamespace || r.CreateIndex != 5 {
		t.Fatalf("registration = %+v, want node n1, job web, default namespace, created at 5", r)
	}
	// The same registration again is no write: the index does not move,
	// so blocked readers are not woken for nothing.
	n, err := writeResult(s, 6, func(tx *Txn) (int, error) {
		return tx.UpsertServiceRegistrations([]*structs.ServiceRegistration{svcReg("a1")})
	})
	mustNoErr(t, err)
	if idx, _ := s.Index(TableServiceRegistrations); n != 0 || idx != 5 {
		t.Fatalf("unchanged upsert wrote %d and moved the index to %d", n, idx)
	}
	moved := svcReg("a1")
	moved.Port = 9090
	_, err = writeResult(s, 7, func(tx *Txn) (int, error) {
		return tx.UpsertServiceRegistrations([]*structs.ServiceRegistration{moved})
	})
	mustNoErr(t, err)
	r, _ = s.ServiceRegistrationByID(nil, moved.ID)
	if r.Port != 9090 || r.CreateIndex != 5 || r.ModifyIndex != 7 {
		t.Fatalf("updated registration = %+v, want port 9090, created 5, modified 7", r)
	}
}

func TestServiceRegistrationUpsertSkipsEndedOrUnknownAllocs(t *testing.T) {
	s := svcFixture(t)
	mustNoErr(t, s.Write(6, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusComplete}})
	}))
	n, err := writeResult(s, 7, func(tx *Txn) (int, error) {
		return tx.UpsertServiceRegistrations([]*structs.ServiceRegistration{svcReg("a1"), svcReg("gone")})
	})
	mustNoErr(t, err)
	if n != 0 {
		t.Fatalf("a late upsert for a finished or unknown alloc wrote %d registrations", n)
	}
	wantSvcAllocs(t, s, "a2")
}

func TestServiceRegistrationUpsertRefusesInvalidAndChangesNothing(t *testing.T) {
	s := svcFixture(t)
	bad := svcReg("a1")
	bad.ServiceName = "not a dns label"
	good := svcReg("a2")
	good.Port = 1
	_, err := writeResult(s, 6, func(tx *Txn) (int, error) {
		return tx.UpsertServiceRegistrations([]*structs.ServiceRegistration{good, bad})
	})
	if err == nil || !strings.Contains(err.Error(), "ServiceName") {
		t.Fatalf("err = %v, want one naming ServiceName", err)
	}
	r, _ := s.ServiceRegistrationByID(nil, good.ID)
	if r.Port != 8080 {
		t.Fatal("a refused batch changed a registration")
	}
}

// A registration never outlives its alloc: every way an alloc ends takes
// its registrations in the same write.
func TestServiceRegistrationsEndWithTheirAlloc(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, s *StateStore)
		want []string
	}{
		{"the client reports the alloc finished", func(t *testing.T, s *StateStore) {
			mustNoErr(t, s.Write(10, func(tx *Txn) error {
				return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusFailed}})
			}))
		}, []string{"a2"}},
		{"the servers stop the alloc", func(t *testing.T, s *StateStore) {
			a, _ := s.AllocByID(nil, "a1")
			stop := a.Copy()
			stop.DesiredStatus = structs.AllocDesiredStatusStop
			mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{stop}) }))
		}, []string{"a2"}},
		{"the alloc's node goes down", func(t *testing.T, s *StateStore) {
			mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpdateNodeStatus("n2", structs.NodeStatusDown, 1, nil) }))
		}, []string{"a1"}},
		{"a node going disconnected keeps them", func(t *testing.T, s *StateStore) {
			mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpdateNodeStatus("n2", structs.NodeStatusDisconnected, 1, nil) }))
		}, []string{"a1", "a2"}},
		{"the node is deregistered", func(t *testing.T, s *StateStore) {
			mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.DeleteNode([]string{"n1"}) }))
		}, []string{"a2"}},
		{"the job is purged", func(t *testing.T, s *StateStore) {
			mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.DeleteJob(structs.DefaultNamespace, "web") }))
		}, nil},
		{"the alloc is garbage collected", func(t *testing.T, s *StateStore) {
			// Only a terminal alloc is collected; its end already took the
			// registration, so put one back underneath to see GC take it.
			mustNoErr(t, s.Write(9, func(tx *Txn) error {
				return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusComplete}})
			}))
			raw := svcReg("a1")
			raw.NodeID, raw.JobID, raw.Namespace = "n1", "web", structs.DefaultNamespace
			mustNoErr(t, s.Write(0, func(tx *Txn) error { return tx.txn.Insert(TableServiceRegistrations, raw) }))
			job, _ := s.JobByID(nil, structs.DefaultNamespace, "web")
			stopped := job.Copy()
			stopped.Stop = true
			mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpsertJob(stopped) }))
			mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.DeleteEvals(nil, []string{"a1"}) }))
		}, []string{"a2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := svcFixture(t)
			ws := memdb.NewWatchSet()
			if _, err := s.ServiceRegistrationsByName(ws, structs.DefaultNamespace, "web"); err != nil {
				t.Fatal(err)
			}
			tc.end(t, s)
			wantSvcAllocs(t, s, tc.want...)
			if len(tc.want) < 2 && !watchFired(ws) {
				t.Fatal("a reader blocked on the service was not woken by the deletion")
			}
		})
	}
}

func TestServiceRegistrationDeleteByIDSkipsMissing(t *testing.T) {
	s := svcFixture(t)
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.DeleteServiceRegistrations([]string{svcReg("a1").ID, "never-there"}) }))
	wantSvcAllocs(t, s, "a2")
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.DeleteServiceRegistrations([]string{"never-there"}) }))
	if idx, _ := s.Index(TableServiceRegistrations); idx != 6 {
		t.Fatalf("a delete of nothing moved the index to %d", idx)
	}
}

func watchFired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}

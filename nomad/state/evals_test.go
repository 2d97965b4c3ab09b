package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestEvalLookupsByEachIndex(t *testing.T) {
	s := testStateStore(t)
	web, web2 := testJob("web"), testJob("web-2")
	prod := testJob("web")
	prod.Namespace = "prod"
	e1, e2, e3, e4 := testEval("aa-1", web), testEval("aa-2", web), testEval("bb-3", web2), testEval("aa-4", prod)
	e2.Status = structs.EvalStatusBlocked
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e1, e2, e3, e4}) }))

	evalIDs := func(es []*structs.Evaluation) string {
		return fmtSet(ids(es, func(e *structs.Evaluation) string { return e.ID }))
	}
	byJob, err := s.EvalsByJob(nil, "default", "web")
	mustNoErr(t, err)
	if got := evalIDs(byJob); got != "[aa-1 aa-2]" {
		t.Fatalf("EvalsByJob(web) = %s; a job sharing the prefix or another namespace leaked in", got)
	}
	blocked, _ := s.EvalsByJobAndStatus(nil, "default", "web", structs.EvalStatusBlocked)
	if got := evalIDs(blocked); got != "[aa-2]" {
		t.Fatalf("blocked evals = %s", got)
	}
	prefix := func(ns, p string) string {
		it, err := s.EvalsByIDPrefix(nil, ns, p)
		mustNoErr(t, err)
		var out []string
		for raw := it.Next(); raw != nil; raw = it.Next() {
			out = append(out, raw.(*structs.Evaluation).ID)
		}
		return fmtSet(out)
	}
	if got := prefix("default", "aa"); got != "[aa-1 aa-2]" {
		t.Fatalf("prefix in default = %s", got)
	}
	if got := prefix("", "aa"); got != "[aa-1 aa-2 aa-4]" {
		t.Fatalf("prefix in all namespaces = %s", got)
	}
	it, _ := s.Evals(nil)
	n := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		n++
	}
	if n != 4 {
		t.Fatalf("Evals lists %d, want 4", n)
	}
}

func TestUpsertEvalKeepsCreateIndex(t *testing.T) {
	s := testStateStore(t)
	e := testEval("e1", testJob("web"))
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) }))
	e.Status = structs.EvalStatusComplete
	e.CreateIndex = 999 // the caller cannot move it
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) }))
	got, _ := s.EvalByID(nil, "e1")
	if got.CreateIndex != 5 || got.ModifyIndex != 6 || got.Status != structs.EvalStatusComplete {
		t.Fatalf("eval = %+v", got)
	}
	if idx, _ := s.Index(TableEvals); idx != 6 {
		t.Fatalf("evals index = %d", idx)
	}
}

func TestDeleteEvalsSkipsMissingIDs(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpsertEvals([]*structs.Evaluation{testEval("e1", job), testEval("e2", job)})
	}))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.DeleteEvals([]string{"e1", "never"}, []string{"never"}) }))
	if e, _ := s.EvalByID(nil, "e1"); e != nil {
		t.Fatal("e1 not deleted")
	}
	if e, _ := s.EvalByID(nil, "e2"); e == nil {
		t.Fatal("e2 deleted")
	}
}

package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestSchedulerConfig(t *testing.T) {
	s := testStateStore(t)
	idx, cfg, err := s.SchedulerConfig()
	mustNoErr(t, err)
	if idx != 0 || cfg.EffectiveAlgorithm() != structs.SchedulerAlgorithmBinpack {
		t.Fatalf("unset config = %d %+v, want defaults", idx, cfg)
	}

	ok, err := writeResult(s, 5, func(tx *Txn) (bool, error) {
		return tx.SchedulerCASConfig(3, &structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread})
	})
	if err != nil || ok {
		t.Fatalf("CAS against a wrong index applied: %v %v", ok, err)
	}
	ok, err = writeResult(s, 5, func(tx *Txn) (bool, error) {
		return tx.SchedulerCASConfig(0, &structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread})
	})
	if err != nil || !ok {
		t.Fatalf("CAS with 0 on an unset config: %v %v", ok, err)
	}
	mustNoErr(t, s.Write(6, func(tx *Txn) error {
		return tx.SchedulerSetConfig(&structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmBinpack})
	}))
	idx, cfg, _ = s.SchedulerConfig()
	if idx != 6 || cfg.CreateIndex != 5 || cfg.ModifyIndex != 6 || cfg.SchedulerAlgorithm != structs.SchedulerAlgorithmBinpack {
		t.Fatalf("config = %d %+v", idx, cfg)
	}
	if ok, _ := writeResult(s, 7, func(tx *Txn) (bool, error) { return tx.SchedulerCASConfig(5, &structs.SchedulerConfiguration{}) }); ok {
		t.Fatal("CAS with a stale index applied")
	}
	if ok, _ := writeResult(s, 7, func(tx *Txn) (bool, error) {
		return tx.SchedulerCASConfig(6, &structs.SchedulerConfiguration{PauseEvalBroker: true})
	}); !ok {
		t.Fatal("CAS with the current index refused")
	}
	if _, cfg, _ := s.SchedulerConfig(); !cfg.PauseEvalBroker {
		t.Fatal("CAS write not visible")
	}
}

func TestKV(t *testing.T) {
	s := testStateStore(t)
	if _, found, err := s.KVGet(nil, "k"); found || err != nil {
		t.Fatalf("unset key found=%v err=%v", found, err)
	}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.KVSet("k", "one") }))
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.KVSet("k", "two") }))
	v, found, err := s.KVGet(nil, "k")
	if v != "two" || !found || err != nil {
		t.Fatalf("KVGet = %q %v %v", v, found, err)
	}
	if idx, _ := s.Index(TableKV); idx != 4 {
		t.Fatalf("kv index = %d", idx)
	}
	if err := s.Write(5, func(tx *Txn) error { return tx.KVSet("", "x") }); err == nil {
		t.Fatal("an empty key was accepted")
	}
}

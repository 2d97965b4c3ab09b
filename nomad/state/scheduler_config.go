package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// SchedulerSetConfig replaces the cluster's scheduler configuration.
func (tx *Txn) SchedulerSetConfig(cfg *structs.SchedulerConfiguration) error {
	return setSchedulerConfigTxn(tx.txn, tx.index, cfg)
}

// SchedulerCASConfig replaces the configuration only if its ModifyIndex is
// still cidx (0 meaning none was ever set), so two operators editing it at
// once do not silently overwrite each other. It reports whether it wrote.
func (tx *Txn) SchedulerCASConfig(cidx uint64, cfg *structs.SchedulerConfiguration) (bool, error) {
	existing, err := schedulerConfigTxn(tx.txn, nil)
	if err != nil {
		return false, err
	}
	var cur uint64
	if existing != nil {
		cur = existing.ModifyIndex
	}
	if cur != cidx {
		return false, nil
	}
	if err := setSchedulerConfigTxn(tx.txn, tx.index, cfg); err != nil {
		return false, err
	}
	return true, nil
}

func setSchedulerConfigTxn(txn *memdb.Txn, index uint64, cfg *structs.SchedulerConfiguration) error {
	if cfg == nil {
		return fmt.Errorf("state: nil scheduler configuration")
	}
	existing, err := schedulerConfigTxn(txn, nil)
	if err != nil {
		return err
	}
	c := *cfg
	if existing != nil {
		c.CreateIndex = existing.CreateIndex
	} else {
		c.CreateIndex = index
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableSchedulerConfig, &c); err != nil {
		return fmt.Errorf("state: inserting scheduler configuration: %w", err)
	}
	return setIndex(txn, TableSchedulerConfig, index)
}

// SchedulerConfig returns the index of the last change and the scheduler
// configuration. Before any is set it returns index 0 and the defaults
// (binpack, no preemption), so readers never have to handle nil.
func (s *StateStore) SchedulerConfig() (uint64, *structs.SchedulerConfiguration, error) {
	return s.SchedulerConfigWatch(nil)
}

// SchedulerConfigWatch is SchedulerConfig for a blocking query.
func (s *StateStore) SchedulerConfigWatch(ws memdb.WatchSet) (uint64, *structs.SchedulerConfiguration, error) {
	txn := s.readTxn()
	cfg, err := schedulerConfigTxn(txn, ws)
	if err != nil {
		return 0, nil, err
	}
	if cfg == nil {
		return 0, structs.DefaultSchedulerConfig(), nil
	}
	idx, err := indexTxn(txn, TableSchedulerConfig)
	if err != nil {
		return 0, nil, err
	}
	return idx, cfg, nil
}

func schedulerConfigTxn(txn *memdb.Txn, ws memdb.WatchSet) (*structs.SchedulerConfiguration, error) {
	ch, raw, err := txn.FirstWatch(TableSchedulerConfig, "id")
	if err != nil {
		return nil, fmt.Errorf("state: scheduler configuration lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.SchedulerConfiguration), nil
}

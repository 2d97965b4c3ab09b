package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// TableScalingEvents holds one structs.JobScalingEvents per job: the
// recent scaling requests of each of its groups. It lives and dies with
// the job: purging the job deletes it.
const TableScalingEvents = "scaling_event"

func scalingEventsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableScalingEvents,
		Indexes: map[string]*memdb.IndexSchema{"id": namespacedIndex("id", "JobID", true)},
	}
}

// upsertScalingEventTxn records event for a group of a job at index: it
// goes first in the group's list, which keeps the newest
// structs.JobTrackedScalingEvents. The event is copied and stamped with
// the index as its CreateIndex; the caller's value is left alone.
func upsertScalingEventTxn(txn *memdb.Txn, index uint64, namespace, jobID, group string, event *structs.ScalingEvent) error {
	if event == nil {
		return fmt.Errorf("state: scaling event for job %s group %s is missing", jobID, group)
	}
	namespace = nsOrDefault(namespace)
	existing, err := scalingEventsTxn(txn, nil, namespace, jobID)
	if err != nil {
		return err
	}
	var all *structs.JobScalingEvents
	if existing != nil {
		all = existing.Copy()
	} else {
		all = &structs.JobScalingEvents{Namespace: namespace, JobID: jobID, ScalingEvents: map[string][]*structs.ScalingEvent{}}
	}
	e := event.Copy()
	e.CreateIndex = index
	events := append([]*structs.ScalingEvent{e}, all.ScalingEvents[group]...)
	if len(events) > structs.JobTrackedScalingEvents {
		events = events[:structs.JobTrackedScalingEvents]
	}
	all.ScalingEvents[group] = events
	all.ModifyIndex = index
	if err := txn.Insert(TableScalingEvents, all); err != nil {
		return fmt.Errorf("state: inserting scaling events of job %s: %w", jobID, err)
	}
	return setIndex(txn, TableScalingEvents, index)
}

// deleteScalingEventsTxn removes a job's scaling history, with the job.
func deleteScalingEventsTxn(txn *memdb.Txn, index uint64, namespace, jobID string) error {
	n, err := txn.DeleteAll(TableScalingEvents, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("state: deleting scaling events of job %s: %w", jobID, err)
	}
	if n == 0 {
		return nil
	}
	return setIndex(txn, TableScalingEvents, index)
}

// ScalingEventsByJob returns a job's scaling events by group, newest
// first, or nil if it has none. The result must not be modified.
func (s *StateStore) ScalingEventsByJob(ws memdb.WatchSet, namespace, jobID string) (*structs.JobScalingEvents, error) {
	return scalingEventsTxn(s.readTxn(), ws, nsOrDefault(namespace), jobID)
}

func scalingEventsTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.JobScalingEvents, error) {
	ch, raw, err := txn.FirstWatch(TableScalingEvents, "id", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("state: scaling events lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.JobScalingEvents), nil
}

// ScalingEvents iterates over the scaling history of every job (for
// snapshot persistence).
func (s *StateStore) ScalingEvents(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableScalingEvents, "id")
}

// ScalingEventsRestore restores a job's scaling history.
func (r *StateRestore) ScalingEventsRestore(e *structs.JobScalingEvents) error {
	return r.insert(TableScalingEvents, e)
}

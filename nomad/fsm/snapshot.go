package fsm

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// snapshotVersion is written first in every snapshot so a later format can
// be told apart.
const snapshotVersion = 1

// maxSnapshotRecord bounds one record of a snapshot being restored. A
// record is one object of the state, which job_max_source_size keeps well
// under the RPC message limit; the bound is four times that limit so that
// a snapshot written before that limit existed still restores.
const maxSnapshotRecord = 4 * rpcx.DefaultMaxMessageSize

// snapshotRecord tags each object in a snapshot stream. Append-only.
type snapshotRecord uint8

const (
	recIndex snapshotRecord = iota + 1
	recNode
	recJob
	recJobVersion
	recJobSummary
	recEval
	recAlloc
	recDeployment
	recSchedulerConfig
	recKV
	recScalingEvents
	recACLPolicy
	recACLToken
	recServerSecret
	// Native service registrations (issue 13, services).
	recServiceRegistration
)

type fsmSnapshot struct {
	snap *state.StateSnapshot
}

// snapshotHeader opens a snapshot stream.
type snapshotHeader struct {
	Version     int
	LatestIndex uint64
}

// Persist streams every table, one tagged record per object.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.persist(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) persist(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256*1024)
	enc := codec.NewEncoder(bw, rpcx.MsgpackHandle)
	latest, err := s.snap.LatestIndex()
	if err != nil {
		return err
	}
	if err := enc.Encode(&snapshotHeader{Version: snapshotVersion, LatestIndex: latest}); err != nil {
		return err
	}
	tables := []struct {
		rec  snapshotRecord
		iter func(memdb.WatchSet) (memdb.ResultIterator, error)
	}{
		{recIndex, func(memdb.WatchSet) (memdb.ResultIterator, error) { return s.snap.Indexes() }},
		{recNode, s.snap.Nodes},
		{recJob, s.snap.Jobs},
		{recJobVersion, s.snap.JobVersions},
		{recJobSummary, s.snap.JobSummaries},
		{recEval, s.snap.Evals},
		{recAlloc, s.snap.Allocs},
		{recDeployment, s.snap.Deployments},
		{recKV, s.snap.KVs},
		{recScalingEvents, s.snap.ScalingEvents},
		{recACLPolicy, s.snap.ACLPolicies},
		{recACLToken, s.snap.ACLTokens},
		{recServerSecret, s.snap.ServerSecrets},
		// Native service registrations (issue 13, services).
		{recServiceRegistration, s.snap.ServiceRegistrations},
	}
	for _, t := range tables {
		it, err := t.iter(nil)
		if err != nil {
			return fmt.Errorf("snapshot record %d: %w", t.rec, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if err := enc.Encode(t.rec); err != nil {
				return err
			}
			if err := enc.Encode(raw); err != nil {
				return err
			}
		}
	}
	if _, cfg, err := s.snap.SchedulerConfig(); err != nil {
		return err
	} else if cfg != nil {
		if err := enc.Encode(recSchedulerConfig); err != nil {
			return err
		}
		if err := enc.Encode(cfg); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {}

// restoreSnapshot reads a stream written by persist into an empty store.
func restoreSnapshot(r io.Reader, st *state.StateStore) error {
	// Each record is framed and checked before it is decoded, as an RPC
	// message is: a snapshot may come from a peer (a leader installing
	// one), and a corrupt one must not make a length claim an allocation.
	dec := rpcx.NewValueReader(r, maxSnapshotRecord)
	var hdr snapshotHeader
	if err := dec.Decode(&hdr); err != nil {
		return fmt.Errorf("reading snapshot header: %w", err)
	}
	if hdr.Version != snapshotVersion {
		return fmt.Errorf("snapshot version %d is not supported (want %d)", hdr.Version, snapshotVersion)
	}
	restore, err := st.Restore()
	if err != nil {
		return err
	}
	defer restore.Abort()
	for {
		var rec snapshotRecord
		if err := dec.Decode(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("reading snapshot record: %w", err)
		}
		if err := restoreRecord(dec, restore, rec); err != nil {
			return err
		}
	}
	return restore.Commit()
}

func restoreRecord(dec *rpcx.ValueReader, r *state.StateRestore, rec snapshotRecord) error {
	var err error
	switch rec {
	case recIndex:
		v := new(state.IndexEntry)
		if err = dec.Decode(v); err == nil {
			err = r.IndexRestore(v)
		}
	case recNode:
		v := new(structs.Node)
		if err = dec.Decode(v); err == nil {
			err = r.NodeRestore(v)
		}
	case recJob:
		v := new(structs.Job)
		if err = dec.Decode(v); err == nil {
			err = r.JobRestore(v)
		}
	case recJobVersion:
		v := new(structs.Job)
		if err = dec.Decode(v); err == nil {
			err = r.JobVersionRestore(v)
		}
	case recJobSummary:
		v := new(structs.JobSummary)
		if err = dec.Decode(v); err == nil {
			err = r.JobSummaryRestore(v)
		}
	case recEval:
		v := new(structs.Evaluation)
		if err = dec.Decode(v); err == nil {
			err = r.EvalRestore(v)
		}
	case recAlloc:
		v := new(structs.Allocation)
		if err = dec.Decode(v); err == nil {
			err = r.AllocRestore(v)
		}
	case recDeployment:
		v := new(structs.Deployment)
		if err = dec.Decode(v); err == nil {
			err = r.DeploymentRestore(v)
		}
	case recSchedulerConfig:
		v := new(structs.SchedulerConfiguration)
		if err = dec.Decode(v); err == nil {
			err = r.SchedulerConfigRestore(v)
		}
	case recKV:
		v := new(state.KVEntry)
		if err = dec.Decode(v); err == nil {
			err = r.KVRestore(v)
		}
	case recScalingEvents:
		v := new(structs.JobScalingEvents)
		if err = dec.Decode(v); err == nil {
			err = r.ScalingEventsRestore(v)
		}
	case recACLPolicy:
		v := new(structs.ACLPolicy)
		if err = dec.Decode(v); err == nil {
			err = r.ACLPolicyRestore(v)
		}
	case recACLToken:
		v := new(structs.ACLToken)
		if err = dec.Decode(v); err == nil {
			err = r.ACLTokenRestore(v)
		}
	case recServerSecret:
		v := new(structs.ServerSecret)
		if err = dec.Decode(v); err == nil {
			err = r.ServerSecretRestore(v)
		}
	// Native service registrations (issue 13, services).
	case recServiceRegistration:
		v := new(structs.ServiceRegistration)
		if err = dec.Decode(v); err == nil {
			err = r.ServiceRegistrationRestore(v)
		}
	default:
		return fmt.Errorf("snapshot record type %d is unknown", rec)
	}
	if err != nil {
		return fmt.Errorf("restoring snapshot record %d: %w", rec, err)
	}
	return nil
}

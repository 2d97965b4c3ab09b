package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// Table names. They are also the keys of the `index` table, so a reader can
// ask "what is the newest write to allocs?" with Index(TableAllocs).
const (
	TableIndex           = "index"
	TableJobs            = "jobs"
	TableJobVersion      = "job_version"
	TableJobSummary      = "job_summary"
	TableNodes           = "nodes"
	TableAllocs          = "allocs"
	TableEvals           = "evals"
	TableDeployments     = "deployment"
	TableSchedulerConfig = "scheduler_config"
	TableKV              = "kv"
	TableACLPolicies     = "acl_policy"
	TableACLTokens       = "acl_token"
	TableServerSecret    = "server_secret"
)

// IndexEntry is a row of the `index` table: the raft index of the latest
// write to the table named Key. A few rows track something finer than a
// table, under a key that is no table name: "node_allocs_deleted:<node ID>"
// is when garbage collection last deleted one of a node's allocs (see
// NodeAllocsDeletedIndex).
type IndexEntry struct {
	Key   string
	Value uint64
}

// KVEntry is a row of the generic `kv` table, used by cluster tests and by
// operators checking that writes replicate.
type KVEntry struct {
	Key         string
	Value       string
	CreateIndex uint64
	ModifyIndex uint64
}

// stateSchema returns the memdb schema. It is built fresh for every store
// because memdb keeps a reference to it.
func stateSchema() *memdb.DBSchema {
	tables := []*memdb.TableSchema{
		indexTableSchema(),
		jobsTableSchema(),
		jobVersionTableSchema(),
		jobSummaryTableSchema(),
		nodesTableSchema(),
		allocsTableSchema(),
		evalsTableSchema(),
		deploymentsTableSchema(),
		schedulerConfigTableSchema(),
		kvTableSchema(),
		scalingEventsTableSchema(),
		aclPoliciesTableSchema(),
		aclTokensTableSchema(),
		serverSecretTableSchema(),
		// Native service registrations (issue 13, services).
		serviceRegistrationsTableSchema(),
	}
	db := &memdb.DBSchema{Tables: make(map[string]*memdb.TableSchema, len(tables))}
	for _, t := range tables {
		if _, dup := db.Tables[t.Name]; dup {
			panic(fmt.Sprintf("state: table %q defined twice", t.Name))
		}
		db.Tables[t.Name] = t
	}
	return db
}

// idIndex is the unique primary index on a string field. Its keys are
// the IDs' own bytes (see idIndexer).
func idIndex(field string) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name:    "id",
		Unique:  true,
		Indexer: &idIndexer{Field: field},
	}
}

// namespacedIndex is a compound Namespace+field index. Exact lookups pass
// both values; prefix lookups ("<name>_prefix") pass the namespace and a
// prefix of the field, or "" to list the whole namespace.
func namespacedIndex(name, field string, unique bool) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name:   name,
		Unique: unique,
		Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
			&memdb.StringFieldIndex{Field: "Namespace"},
			&memdb.StringFieldIndex{Field: field},
		}},
	}
}

func indexTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableIndex,
		Indexes: map[string]*memdb.IndexSchema{"id": idIndex("Key")},
	}
}

func jobsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobs,
		Indexes: map[string]*memdb.IndexSchema{
			"id": namespacedIndex("id", "ID", true),
			"type": {
				Name:         "type",
				AllowMissing: true,
				Indexer:      &memdb.StringFieldIndex{Field: "Type"},
			},
			// gc holds whether the job may be garbage collected, so the core
			// scheduler does not scan every job.
			"gc": {
				Name:    "gc",
				Indexer: &memdb.ConditionalIndex{Conditional: jobIsGCableIndex},
			},
			// periodic lets the leader's periodic dispatcher find its jobs
			// on gaining leadership without scanning every job.
			"periodic": {
				Name:    "periodic",
				Indexer: &memdb.ConditionalIndex{Conditional: jobIsPeriodicIndex},
			},
		},
	}
}

func jobVersionTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobVersion,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ID"},
					&memdb.UintFieldIndex{Field: "Version"},
				}},
			},
		},
	}
}

func jobSummaryTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableJobSummary,
		Indexes: map[string]*memdb.IndexSchema{"id": namespacedIndex("id", "JobID", true)},
	}
}

func nodesTableSchema() *memdb.TableSchema {
	// Only the ID is indexed. Each index entry costs a few hundred bytes
	// of heap per node, and lookups by secret or by pool are rare (no
	// server path makes them: a node's calls name its ID and are checked
	// against its secret), so NodeBySecretID and NodesByNodePool scan the
	// nodes instead of keeping indexes on them.
	return &memdb.TableSchema{
		Name: TableNodes,
		Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"),
		},
	}
}

func allocsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableAllocs,
		Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"),
			// node is NodeID + "is terminal", so the plan applier and the
			// client endpoints can read only the live allocs of a node.
			"node": {
				Name:         "node",
				AllowMissing: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "NodeID"},
					&memdb.ConditionalIndex{Conditional: allocIsTerminalIndex},
				}},
			},
			// job is Namespace+JobID+DeploymentID: a job's allocs, and
			// one deployment's (see allocJobIndex).
			"job": {
				Name:         "job",
				AllowMissing: true,
				Indexer:      allocJobIndex{},
			},
			// No index on EvalID: see AllocsByEval.
		},
	}
}

func evalsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableEvals,
		Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"),
			// job is Namespace+JobID+Status; pass "" as the status with
			// "job_prefix" to get every eval of one job.
			"job": {
				Name:         "job",
				AllowMissing: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "JobID"},
					&memdb.StringFieldIndex{Field: "Status"},
				}},
			},
		},
	}
}

func deploymentsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableDeployments,
		Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"),
			"job": func() *memdb.IndexSchema {
				s := namespacedIndex("job", "JobID", false)
				s.AllowMissing = true
				return s
			}(),
		},
	}
}

func schedulerConfigTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableSchedulerConfig,
		Indexes: map[string]*memdb.IndexSchema{
			// A singleton: every object has the same id, so an insert
			// replaces the previous configuration.
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: &memdb.ConditionalIndex{Conditional: func(any) (bool, error) { return true, nil }},
			},
		},
	}
}

func serverSecretTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableServerSecret,
		Indexes: map[string]*memdb.IndexSchema{
			// A singleton, like the scheduler configuration.
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: &memdb.ConditionalIndex{Conditional: func(any) (bool, error) { return true, nil }},
			},
		},
	}
}

func kvTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableKV,
		Indexes: map[string]*memdb.IndexSchema{"id": idIndex("Key")},
	}
}

func allocIsTerminalIndex(obj any) (bool, error) {
	a, ok := obj.(*structs.Allocation)
	if !ok {
		return false, fmt.Errorf("unexpected type %T for the allocs node index", obj)
	}
	return a.TerminalStatus(), nil
}

func jobIsGCableIndex(obj any) (bool, error) {
	j, ok := obj.(*structs.Job)
	if !ok {
		return false, fmt.Errorf("unexpected type %T for the jobs gc index", obj)
	}
	return JobIsGCable(j), nil
}

func jobIsPeriodicIndex(obj any) (bool, error) {
	j, ok := obj.(*structs.Job)
	if !ok {
		return false, fmt.Errorf("unexpected type %T for the jobs periodic index", obj)
	}
	return j.IsPeriodic(), nil
}

// JobIsGCable reports whether the core scheduler may collect the job once
// its evals and allocs are old enough: it must be dead, and either stopped
// by the user or a batch job that finished. A periodic or parameterized
// parent is never collected while it is not stopped, since it is a template
// that outlives its children.
func JobIsGCable(j *structs.Job) bool {
	if j.Status != structs.JobStatusDead {
		return false
	}
	if j.Stop {
		return true
	}
	if j.IsPeriodic() || j.IsParameterized() {
		return false
	}
	return j.Type == structs.JobTypeBatch || j.Type == structs.JobTypeSysBatch
}

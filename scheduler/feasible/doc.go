// Package feasible decides where one allocation of a task group may run and
// where it should run.
//
// # Shape
//
// A Stack is built once per evaluation attempt around an EvalContext (the
// state snapshot, the plan being built, a seeded rand and caches). The
// scheduler gives it the candidate nodes (SetNodes) and the job (SetJob),
// then calls Select once per placement. Select
//
//  1. draws candidate nodes from a source: the shuffled node list read from
//     where the previous Select stopped, or, when the group has spread or
//     affinity blocks, node buckets ordered by how much the spread and
//     affinity scores want them (see source.go);
//  2. runs each node through a chain of small checkers (node ready, drivers,
//     constraints, distinct_hosts, distinct_property), each of which names
//     why it rejected a node in the placement metrics; constraint outcomes
//     that depend only on class-wide attributes are cached per computed node
//     class;
//  3. fits the group on the node (CPU, memory, disk, static and dynamic
//     ports) with structs.AllocsFit over EvalContext.ProposedAllocs, the same
//     arithmetic the plan applier uses, so the two never disagree; a node
//     that does not fit is "exhausted" on a dimension, not "filtered";
//  4. scores the node: binpack or spread fit, job anti-affinity, the
//     reschedule penalty, affinities and spread blocks, averaged;
//  5. stops after a limited number of scored candidates (log2 of the node
//     count for services, two for batch) and returns the best.
//
// # Why spread is cheap here
//
// A spread score depends on how many of the group's allocations (existing
// plus proposed in the plan) sit on each attribute value. The EvalContext
// keeps those counts incrementally: it reads the job's allocations once per
// snapshot and, at each Select, folds in only the plan entries appended since
// the previous Select. Attribute values are read from each node once per
// SetNodes. A placement therefore costs about the same with or without a
// spread block, instead of recounting every allocation for every node.
//
// # Determinism
//
// Every random choice (node shuffle, bucket order, dynamic ports) uses the
// EvalContext's *rand.Rand, and ties are broken by that shuffled order, so
// the same seed on the same snapshot yields the same plan. The package reads
// no clock, starts no goroutines and uses no global random source.
//
// # Promise 1
//
// An allocation the plan stops keeps its resources until its client reports
// it terminal (or the plan marks it lost): ProposedAllocs returns it and
// structs.AllocsFit counts it. Only checks about where the job "is" (distinct
// hosts, anti-affinity, spread, distinct_property) ignore allocations that
// are being stopped.
package feasible

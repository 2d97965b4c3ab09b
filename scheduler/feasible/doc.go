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
//     the node's user.denylist (user.go), host volumes (host_volume.go) and
//     host networks (host_network.go), constraints, distinct_hosts,
//     distinct_property), each of which names
//     why it rejected a node in the placement metrics; constraint outcomes
//     that depend only on class-wide attributes are cached per computed node
//     class, and the verdict of the checks that cannot change during the
//     evaluation (status, drivers, constraints) per node (ring_verdicts.go,
//     and the buckets, built from the nodes that pass them);
//  3. fits the group on the node (CPU, memory, disk, static and dynamic
//     ports) with structs.AllocsFit over EvalContext.ProposedAllocs, the same
//     arithmetic the plan applier uses, so the two never disagree; a node
//     that does not fit is "exhausted" on a dimension, not "filtered";
//  4. scores the node: binpack or spread fit (0..1), job anti-affinity
//     (-(collisions+1)/count), and when they apply to the placement the
//     reschedule penalty (-1 on PenaltyNodeIDs), affinities and spread
//     blocks (-1..1); the final score is their average. A score that
//     applies is on every node's sheet, 0 where it does not bite, so all
//     nodes are averaged over the same terms;
//  5. stops after a limited number of scored candidates (log2 of the node
//     count for services, two for batch; up to three candidates with a
//     negative score do not count) and returns the best, recording the top
//     five in AllocMetric.ScoreMetaData.
//
// SelectOptions.PreferredNodes are tried, all of them, before the sampled
// nodes. SelectOptions.InPlaceAllocID names an allocation the placement
// updates in place, so its old version neither holds resources nor counts
// as the job being on its node. The system stack considers exactly the
// nodes it is given, in order, without sampling.
//
// Besides the stacks, the package offers ReadyNodesInDCsAndPool (candidate
// nodes), ComputeClass (for whoever fills Node.ComputedClass on
// registration), EvalContext.ClassEligibility and EscapedComputedClass (for
// blocked evaluations), and test builders in mock.go.
//
// # Why spread is cheap here
//
// Nomad scores every feasible node when a group has spread or affinity
// blocks, and recounts the job's allocations per node, which takes tens of
// seconds for a thousand placements on thousands of nodes. Here nodes are
// grouped in buckets that spread and affinity cannot tell apart (same
// attribute values, same affinity score); each Select scores the buckets
// (tens of them), then samples about log2(n) nodes from the best buckets
// first. Fitness and anti-affinity still pick among those nodes.
//
// Nodes that the checks whose verdict cannot change during the evaluation
// refuse (status, drivers, constraints) are left out of the buckets when
// they are built. Otherwise a value that a constraint rules out, never
// used, would score best forever and every Select would walk its nodes
// first: with 50 racks, half of them ruled out, half the fleet per
// placement. The values a group spreads over are the values of the nodes
// left in; a ruled-out value neither is the "least used" value nor takes
// a share of the percent the targets leave. A Select that fails adds the
// nodes left out to its metrics, so a blocked evaluation still explains
// every node. Leaving them out changes no placement: the other nodes keep
// their order, and a property test compares the result with a source that
// walks every node every time (spread_equivalence_test.go).
//
// A node on which the group did not fit on CPU, memory or disk sleeps, out
// of the walk, until the plan's entries for it change (sleep.go, with the
// memo of fit_memo.go): a value whose nodes are full of other work keeps
// the best spread score, and without this every Select would try each of
// its nodes again. The walk still counts a sleeping node as evaluated and
// exhausted where it passes it, and a bucket whose nodes all sleep in one
// step, so metrics and placements stay those of the full walk.
//
// A spread score depends on how many of the group's allocations (existing
// plus proposed in the plan) sit on each attribute value. The EvalContext
// keeps those counts incrementally: it reads the job's allocations once per
// snapshot and, at each Select, folds in only the nodes the plan changed
// since the previous Select (the plan's journal, Plan.TouchedSince).
// Attribute values are read from each node once per SetNodes. The buckets
// stay in order from one Select to the next, and a placement rescores only
// the buckets of the values whose count it changed (order.go), so a spread
// over a value per node costs no pass over the buckets either. A placement
// therefore costs about the same with or without a spread block, instead of
// recounting every allocation for every node.
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

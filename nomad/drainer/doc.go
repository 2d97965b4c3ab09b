// Package drainer is the leader's node drainer: it moves the work off
// draining nodes at the pace each task group's migrate block allows, stops
// what is left at the drain's deadline, and ends each drain once nothing
// that must move is left.
//
// # Shape
//
// Plan is a function: it reads one state snapshot and the time, and
// returns the raft entries to write (one entry of migration marks with the
// jobs' evals and the nodes' events, and one drain-complete entry per
// finished node) and when the next deadline falls. Run is the loop that
// owns the drainer: one goroutine, started when this server gains
// leadership and stopped (its context cancelled) when it loses it. Each
// pass plans from a fresh snapshot, writes through raft, then sleeps until
// something it read changes or the next deadline comes on the injected
// clock. It keeps nothing between passes: a new leader's drainer resumes
// every drain from the drain strategies and allocations in state.
//
// # Pacing
//
// A service group never has more than max_parallel of its allocations
// migrating without a settled replacement. An allocation counts as
// settled when it is not terminal, not marked to migrate, and its health
// has been decided (DeploymentStatus.Healthy set, true or false: Nomad's
// rule, so a replacement that fails its checks does not hold a drain up
// for ever; the reschedule policy deals with it). A pass marks
//
//	min(drainable, settled - (count - max_parallel))
//
// more allocations of the group, where drainable are its unmarked allocs on
// draining nodes. Unlike Nomad, an allocation already marked but not yet
// stopped (its replacement found no room: a blocked eval) does not count as
// settled, so capacity that appears later never moves more than
// max_parallel at once; the marked allocation keeps running until its
// replacement is placed or the deadline comes.
//
// Batch allocations are never marked before the deadline: they run until
// they finish. System allocations are marked (and stopped, not replaced)
// once every other allocation on the node has been reported stopped,
// unless the drain ignores system jobs. At the deadline everything left is
// marked, and the scheduler stops it at once (the node's deadline has
// passed). A drain completes when nothing that must move still runs (after
// the deadline: when everything left has been told to stop); the node then
// stays ineligible unless the drain asked otherwise.
package drainer

// Package heartbeat is the leader's heartbeater: it keeps a deadline per
// node, tells each client the TTL it must beat, and marks a node that
// misses its deadline down or disconnected.
//
// # What it owns
//
//   - A deadline per live node (heartbeater.go, deadlines.go): one min-heap
//     and one clock timer, the wake, for all of them, rather than a timer
//     per node. A heartbeat (ResetTTL) moves the node's deadline to its TTL
//     plus the grace period.
//   - The TTLs: MinHeartbeatTTL, or more as the fleet grows, so that its
//     total heartbeat rate stays under MaxHeartbeatsPerSecond, with a
//     random stagger of up to as much again so that clients do not
//     synchronise.
//   - The expiry queue and the node-down writes (batch.go): a node whose
//     deadline passes is marked down, or disconnected when some of its
//     allocations' groups allow a disconnect window; either change carries
//     node-update evals for the node's jobs (NodeEvals). A disconnected
//     node gets a second deadline, the largest disconnect.lost_after of its
//     allocations plus grace after it was marked: silent by then, it is
//     marked down too.
//   - A status lock per node (nodelocks.go, LockNode).
//   - Stall detection (stall.go): a watchdog timer that notices when this
//     server itself did not run.
//
// # What it promises
//
//   - A node silent past its deadline is marked, with the time of the
//     decision in the raft entry (UpdatedAt, the node event, the evals'
//     times), so the FSM reads no clock.
//   - When many deadlines pass together (the leader lost its network to a
//     rack), at most MaxNodeDownPerSecond nodes are marked a second: a
//     short split marks a bounded number of nodes before their heartbeats
//     resume, and a queued node that heartbeated meanwhile is left alone.
//     Queued nodes are marked in batches, one raft entry each (at most
//     maxNodeDownBatch nodes and maxNodeDownEntryEvals evals), so the rate
//     holds in nodes per second even where one commit takes longer than
//     the interval.
//   - A heartbeat and an invalidation of the same node never interleave.
//     Every decision that reads a node's status and writes a new one (a
//     heartbeat and a registration in the server's endpoints, an
//     invalidation here) holds the node's lock from the read until the
//     write has committed and the deadline is re-armed: either the
//     heartbeat re-arms first and the invalidation stands down, or the
//     invalidation commits first and the heartbeat finds the node down and
//     writes it ready again.
//   - A new term gives every node that is not down the failover TTL (at
//     least the longest TTL the last leader could have handed out, plus
//     grace), or the rest of its disconnect window if longer: an election
//     does not mark the fleet down before clients find the new leader.
//   - This server's own stall (a stopped process, a suspended VM) is not
//     the nodes' fault: a node whose deadline fell in it, or within a
//     grace after it, gets a fresh window (the longest TTL plus grace)
//     instead, at most MaxStallWindows times in a row; the stall is logged
//     once. A node silent through its fresh window expires on time.
//   - Nothing survives a term: Run ends by forgetting every deadline, and
//     the next term starts from state.
//
// # Goroutines and their state
//
// The server creates one Heartbeater for its lifetime and runs Run for
// each term of leadership; disabled (between terms) it arms nothing.
//
//   - Run's goroutine owns the receiving end of the expiry queue, the
//     batches and their pacing, and is the only one that writes node
//     statuses (Writer).
//   - The wake's and the watchdog's callbacks run on the clock's
//     goroutines (a clock.Fake's Advance runs them on its caller's): the
//     wake moves due deadlines to the expiry queue, or gives them a stall
//     window; the watchdog records that the heartbeater runs.
//   - The server's endpoints call LockNode, ResetTTL, Armed, Tracked,
//     Clear and ArmDisconnected (which reads State) from their own
//     goroutines.
//
// Everything shared (the deadlines, the wake, the random source, the
// watchdog and the stall record) is under the Heartbeater's mutex. Lock
// order: a node's lock, then the mutex; a batch takes its nodes' locks in
// node ID order.
//
// # What it needs
//
// A StateReader (nodes and the allocations on a node, from the current
// state store), a StatusWriter that commits a batch of node status changes
// through raft, a clock (helper/clock), a random source, a logger,
// metrics, and the state store's interning of node IDs. It imports neither
// the server nor the state store: the server hands it adapters
// (nomad/heartbeat.go), and its tests run it against in-memory fakes and
// a clock.Fake.
package heartbeat

// Package fsm is the servers' raft FSM: it applies each committed raft
// entry (nomad/raftlog says what its bytes are) to the state store, turns
// the entry's committed changes into events and alloc-change notices, and
// writes and restores the snapshots raft takes of the state.
//
// # Promises
//
//   - Deterministic: a handler uses only the entry's index and the values
//     in it, never the clock or a random source, so every server ends with
//     the same state and the same events.
//   - Atomic: an entry changes the store in one write transaction; one
//     that fails part way changes nothing, on every server alike.
//   - No entry crashes a server: an entry of an unknown type, or one whose
//     handler cannot decode or apply it, is answered with an error (or
//     skipped, with the ignore-unknown flag), never a panic that would
//     repeat at every start.
//   - A snapshot is read with the RPC codec's bounds, so a malformed one is
//     refused, not allocated.
//
// # What it needs
//
// The FSM owns its state store and knows nothing of the server. What it
// tells the server goes through three narrow interfaces, all optional:
//
//   - Hooks: the leader-only consequences of an entry (evals to the eval
//     broker and blocked evals, capacity that may wake blocked evals, jobs
//     the periodic dispatcher tracks or drops). They run after the entry's
//     transaction committed; the server's do nothing on followers.
//   - EventSink: the events of each entry (*stream.Broker is one).
//   - AllocSink: the nodes whose alloc index an entry moved, for the
//     server's pushed alloc-change notices.
//
// The server also calls a few checks the FSM makes, to refuse a request
// early without a raft write: CheckJobModifyIndex, CheckDispatchParent,
// LiveDispatchedChild; and it answers DispatchDuplicate and
// ErrReadyNodeEvalsStale, two answers of the FSM to an entry.
package fsm

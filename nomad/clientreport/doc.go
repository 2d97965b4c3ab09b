// Package clientreport decides what a client's report of its allocations
// changes: which allocations take the reported status, and which
// evaluations the change needs.
//
// # One decision, made by the FSM
//
// Decide is a function of the state the report is judged against, the
// reports, and the entry's time and index. It reads no clock and makes no
// random IDs (evaluation IDs derive from the raft index), so every server
// that applies the same entry decides the same. The FSM runs it once, at
// apply time, against the state raft ordered before the entry: a node
// marked down, an allocation marked lost or unknown, a newer version the
// servers wrote between the client's read and the entry are all seen.
//
// The Node.UpdateAlloc endpoint keeps what only it can do: authenticate
// the node, refuse a batch naming another node's allocation, and give the
// client an early, cheap refusal (a node not ready, a transition no
// client may make) so that the client learns its error at once. It
// decides nothing else and builds no evaluation.
//
// # What a report triggers
//
//   - A report from an allocation waiting to reconnect (its last server
//     mark is unknown) of anything but unknown: a reconnect evaluation, so
//     the scheduler picks between the original and its replacement.
//   - An allocation the servers still want reported failed: an
//     evaluation to reschedule it.
//   - A service or system allocation the servers still want reported
//     complete (its client stopped it itself, after losing the servers):
//     an evaluation to replace it. Finished batch work needs none.
//
// One evaluation per job and entry, whatever the number of reports.
//
// # What is dropped, not refused
//
// Reports about allocations collected meanwhile, allocations already
// finished on the client, and reports based on a version older than the
// one in state (StaleClientReport: the client reports again once it has
// read the newer one). The whole batch is refused when the node is not
// ready (its reports wait for its heartbeat, which is what orders a
// reconnect) and for a transition no client may make (the endpoint
// refuses those before they reach the log; one that does changes
// nothing).
package clientreport

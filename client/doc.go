// Package client is the Drover client agent: it fingerprints the machine,
// registers it as a node, keeps it alive with heartbeats, runs the
// allocations the servers assign through alloc and task runners, reports
// their status, and cleans up after them.
//
// # Goroutines and what they own
//
// NewClient starts these, each with the Client's context; Shutdown cancels
// it and waits for all of them:
//
//   - heartbeatLoop owns registration and the heartbeat schedule. It is the
//     only writer of lastHeartbeatOK and the heartbeat signal that releases
//     held alloc updates.
//   - watchAllocs owns the assignment: the index of the last applied
//     Node.GetClientAllocs answer and the per-alloc AllocModifyIndex already
//     applied. It is the only goroutine that creates alloc runners (besides
//     restore, before it starts) and removes them from the assignment.
//   - the updater owns the batch of pending status updates.
//   - fenceLoop stops allocs whose group says stop_on_client_after once the
//     servers have been unreachable that long.
//   - the GC collector destroys terminal alloc dirs.
//   - the service registration syncer (package servicereg) owns what the
//     client believes the servers hold of its native service registrations,
//     and keeps them equal to what its allocs want; alloc reports and
//     applied assignments kick it.
//   - runStats sets the client's metrics gauges every StatsInterval
//     (metrics.go); it only reads.
//   - one small goroutine per alloc runner waits for it to end and hands a
//     terminal one to the GC.
//
// The map of alloc runners is guarded by allocMu; every other shared field
// by mu. Lock order: allocMu before mu (checkFence holds both); an alloc
// runner's own mutex is never held while calling back into the Client. Alloc and task runners have their own goroutines (see their
// packages); Shutdown stops them without stopping the tasks, unless the
// config asks for that (dev mode), so a restarted client re-attaches.
//
// # What a task can reach
//
// Every start sets the data dir's modes (datadir.go): the data dir and
// the alloc base 0711, so a task run as another user reaches its own
// alloc dir and lists nothing; the state dir 0700, never reachable by a
// task. Inside an alloc dir, package allocdir says who may reach what.
// Tasks inherit of the agent's environment what taskenv allows (the
// client's env.denylist on top of Nomad's), and run only as a user the
// client's user.denylist allows for their driver (package taskuser; the
// node advertises both settings so the scheduler places accordingly).
//
// # Acting as its node
//
// The node's ID and secret are made once and kept in the state dir
// (client-id, secret-id). Every call the client makes for itself carries
// both (Client.identity): registration, heartbeats, the assignment query,
// the alloc reads, the status reports, and the service registrations and
// template reads of the catalog; the servers refuse any of them
// without the secret. An update refused because of who sent it (the node
// unknown to the servers, or its secret refused) is held like one refused
// for a node that is not ready, never dropped: it is about the node, not
// the update.
//
// # The assignment is the truth
//
// What the servers list in Node.GetClientAllocs is what this node should
// run. The client stops anything it runs that is not listed, or listed with
// desired status stop or evict, and a restored alloc starts nothing until
// the assignment confirms it (DESIGN.md promises 3 and the disconnect
// rules). Every answer carries the raft index it reflects; an answer older
// than the last applied one is ignored, and an alloc created after an
// answer's index is never removed because that answer lacks it.
//
// Reports carry their basis the same way: each alloc's status report
// names, as its AllocModifyIndex, the version of the alloc the client ran
// when it made it. The servers ignore a non-terminal report based on an
// older version than their latest change to the alloc (an unknown mark, a
// stop, a reconnect decision, an in-place update), so an alloc runner
// reports again whenever it reads a newer version, even if its status did
// not change: a report held while the node was not ready, or in flight
// when the servers changed the alloc, is then replaced by one they take.
package client

// Package servicereg registers the client's `provider = "nomad"` services
// in the servers' catalog and deregisters them, as Nomad's client does.
//
// # What is registered
//
// Registrations (registrations.go) derives, from one alloc as the client
// sees it (the servers' version with the client's task states), the
// registrations it should have now: a group service while the alloc is
// running, a task service while its task is running, none once the
// servers want the alloc stopped or it has ended. The address and port
// come from the service's port label in the alloc's networks. Each
// registration's ID is derived from the alloc, task, service name and
// port label, so a client that restarts registers the same IDs again and
// never leaves duplicates.
//
// # Ownership
//
// A Syncer has one goroutine, Run, started and waited for by the client.
// It alone owns what it believes the servers hold (known). It wakes on
// Kick (the client kicks it on every alloc change), after a failed pass
// (with backoff, on the injected clock), and every ResyncInterval, when it
// forgets what it believes and registers everything again, which repairs a
// registration a user deleted or the servers dropped. Each pass compares
// the wanted registrations with known, and upserts and deletes the
// differences in bounded batches through the node's own RPCs. A delete is
// retried until the servers acknowledge it; the servers also delete an
// alloc's registrations in the same raft entry that ends the alloc, so a
// client that dies never leaves one behind for long.
package servicereg

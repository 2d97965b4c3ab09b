// Package nodesim simulates many client nodes in one process, each one a
// real client as far as the servers can tell: its own node ID and secret,
// Node.Register, heartbeats at the TTL the servers give (half of it, minus
// up to a tenth of jitter; failures back off exponentially with equal
// jitter, as the real client), a Node.GetClientAllocs blocking query
// followed by Alloc.GetAllocs for the allocs whose index moved, and alloc
// status batched into Node.UpdateAlloc every UpdateInterval with the report
// basis (AllocModifyIndex) of the version it reports on. Allocations run
// with the mock driver's semantics (run_for, exit_code, start_error,
// kill_after) without any process.
//
// It exists to measure and test the servers at fleet size (`drover
// nodesim`, `make bench-cluster`), so it spends as little as it can per
// node: one goroutine per node (its blocking query), heartbeats and task
// exits on runtime timers (time.AfterFunc, no goroutine while waiting),
// and every other call bounded by one semaphore shared by all nodes.
//
// Connections: nodes are grouped in shards of Config.NodesPerShard. Each
// shard has its own connection pool (one yamux session per server for
// quick calls, one for long polls) and, when the servers are on loopback,
// its own loopback source address (127.0.x.y). The servers bound streams
// per session (limits.rpc_max_streams_per_session, 1,024), connections per
// IP (limits.rpc_max_conns_per_client, 100) and blocking queries per IP
// (limits.max_blocking_queries_per_client, 256): with 200 nodes a shard
// every bound holds as it does for real nodes. Against remote servers all
// shards share the host's address, so those limits must be raised there.
//
// Ownership: Sim owns the shards and nodes; each node's watch goroutine
// owns its assignment index and known-version map; everything else of a
// node (registration, TTL, allocs, pending reports, fault state) is
// guarded by the node's mutex, since timers fire on goroutines of their
// own. Stop cancels every node's context, stops its timers and waits for
// the watch goroutines and the calls in flight.
package nodesim

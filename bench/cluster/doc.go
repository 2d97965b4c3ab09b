// Package cluster is the end-to-end cluster benchmark (`make
// bench-cluster`): real servers (one, and three) in this process, with
// raft on disk, and `drover nodesim` as a separate process holding 5,000
// and 10,000 simulated nodes over real RPC. It registers service jobs
// totalling 20,000 allocations, half binpacked and half spread over 50
// racks, and measures placements per second from registration to every
// alloc reported running, evaluation latency, heartbeats handled per
// second, the servers' heap per node and per alloc, and a disconnect storm
// (1,000 nodes cut off until the servers mark them down, then back).
//
// The servers run in the benchmark's own process so that their heap can
// be read directly (runtime.MemStats after a GC); the simulator runs in
// another so that its heap is not counted. With three servers the heap is
// that of all three, divided by three.
//
// The storm also reports what tells an overloaded machine from the
// servers' own cost: elections while the nodes are cut off (each re-arms
// every live node's failover window), the raft entries that marked nodes
// down, and the servers' process CPU time against the time its threads
// waited on the kernel's run queues, with goroutine wait and GC pause
// figures from runtime/metrics. -server-log, -storm-cpu-profile and
// -nodesim-nice help find out more.
//
// The benchmark is behind the benchcluster build tag: it takes minutes
// and the whole machine, so `make test` never runs it. Results are printed
// as a table and written as JSON (-json) so runs can be compared.
package cluster

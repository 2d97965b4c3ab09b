// Package nomad is the Drover server: a raft member holding the replicated
// state, the RPC endpoints clients and the CLI reach, and the leader-only
// machinery that turns evaluations into committed plans.
//
// # Data flow
//
// A write (Job.Register, Node.UpdateAlloc, ...) is validated by its endpoint
// on the leader (followers forward it), which makes every ID and timestamp
// the entry needs and commits one raft entry. The FSM (nomad/fsm) applies the
// entry to the state store deterministically and, on the leader only, hands
// new evaluations to the EvalBroker or BlockedEvals. Workers (every server
// runs num_schedulers of them) dequeue evaluations from the leader, run the
// scheduler on a state snapshot at least as new as the eval, and submit
// plans; the single plan applier re-checks each plan against the newest
// state (an allocation holds its resources until its client reports it
// terminal) and commits what fits.
//
// A call a client makes for itself carries its node's ID and secret and is
// checked before it reads or writes anything; it may act only on its own
// node and that node's allocations, and no answer carries a node's secret
// (node_identity.go).
//
// Every read that answers a list of objects answers it a page at a time
// (list_paging.go): up to QueryOptions.PerPage objects and half the RPC
// message limit in bytes, with QueryMeta.NextToken naming where the next
// page starts. A list of large objects (jobs with 1 MB of meta,
// allocations embedding them) therefore always crosses the network, and a
// caller that needs the whole list follows the tokens.
//
// # Who owns what
//
//   - Server.ctx owns the RPC accept loop, the leadership monitor, the join
//     loop, the workers and the metrics loop (runStats, metrics.go, which
//     sets the queue gauges every Config.StatsInterval); Shutdown cancels
//     it and waits for them.
//   - monitorLeadership is the only caller of establishLeadership and
//     revokeLeadership. The leader context it creates owns the plan
//     applier, the heartbeat timers, the failed-eval and cancel reapers,
//     the unblock-failed loop, the core GC loop and the node drainer;
//     revokeLeadership cancels and waits for them,
//     then disables the broker, blocked evals and plan queue.
//   - The FSM owns the state store pointer (it changes on snapshot
//     restore); everyone else reads it through Server.State().
//   - The heartbeat manager lives as long as the server and is switched on
//     for each leadership term; its run loop owns the queue of expired
//     nodes (one timer, at the earliest of the nodes' deadlines, only
//     feeds it; heartbeat_deadlines.go), and a per-node lock orders a heartbeat
//     against an invalidation of the same node. A disconnected node goes
//     down when its largest disconnect.lost_after (plus grace) passes.
//   - The plan queue and applier (nomad/planner) serve the whole leader
//     term: establishLeadership enables the queue and starts the applier
//     (runPlanApplier, leader_planner.go) as one goroutine, which alone
//     decides and commits plans; it reads the state store and commits
//     through plannerState and plannerRaft. Plan.Submit (plan_endpoint.go)
//     checks the eval's token with the broker and enqueues.
//   - The periodic dispatcher (periodic*.go) owns its tracked jobs and its
//     launch loop. establishLeadership enables it and rebuilds it from
//     state (catching up a missed launch once); revokeLeadership disables
//     it, which stops and waits for the loop. FSM hooks keep it in step
//     with job registers and stops.
//   - The core GC loop (runCoreGC, core_gc_loop.go) runs under the leader
//     context and owns its per-kind timers and the record of which kind is
//     collecting; each collection runs on a goroutine the loop waits for,
//     and writes its deletions in bounded raft entries (core_gc.go).
//   - The node drainer (nomad/drainer, started by runDrainer in
//     leader_drainer.go) runs under the leader context as one goroutine. It
//     keeps nothing between passes: each pass plans from a state snapshot
//     and writes through raft, so the next leader resumes every drain.
//   - The deployment watcher (nomad/deploymentwatcher, started by
//     runDeploymentWatcher in leader_deploymentwatcher.go) runs under the
//     leader context as one goroutine. It owns only what it has acted on
//     (each deployment's health when it last asked for an eval) and the
//     evals waiting for their 250ms batch; deployments themselves are in
//     the state store, changed only through raft, so a new leader's
//     watcher starts from state. It reads the state store through its
//     State interface and writes through deploymentWatcherRaft; the
//     deployment endpoints build their entries with its Eval and
//     FailureRequest.
//
// # Native services
//
// The ServiceRegistration endpoint (service_registration_endpoint.go)
// keeps the catalog of provider = "nomad" services. Clients write it for
// their own allocs only, and only their job's services; the state store
// deletes an alloc's registrations in the same write that ends the alloc,
// marks its node down, purges its job or collects the alloc
// (nomad/state/service_registrations.go).
//
// # ACLs
//
// The ACL endpoint (acl_endpoint*.go, acl_bootstrap.go) stores policies
// and tokens through raft. A token's secret is made on the leader and only
// its SHA-256 goes to raft and the state store; raftlog.Encode also clears the
// caller's AuthToken (and a forwarding server's ServerToken) from every
// request before it becomes an entry, so no caller's secret is ever on
// disk. Server.ResolveToken (acl.go) looks a token up by the hash of its
// secret and compiles its policies into an *acl.ACL, cached in a bounded
// LRU keyed by the policies' names and indexes.
//
// Every endpoint a user can reach checks the request's token with
// Nomad's capabilities, first thing after it forwarded (acl_check.go):
// jobs need submit-job, read-job, list-jobs, dispatch-job, scale-job and
// the like in the job's namespace; allocations, evaluations and
// deployments read-job (alloc-lifecycle to stop an allocation; submit-job
// to promote, pause, fail, unblock or set health in a deployment); nodes node
// read or write; the raft and scheduler configuration operator read or
// write; garbage collection and KV a management token. Lists answer only
// the namespaces the token may read. A refusal wraps
// structs.ErrPermissionDenied and changes nothing; an unknown or expired
// token is structs.ErrTokenNotFound. A client's own node calls are
// authenticated by its node secret instead, and Status needs nothing.
//
// # Who may call what
//
// With the agent's tls block (Config.TLS) the RPC port takes only TLS
// connections with a certificate of the CA, and with verify_server_hostname
// the certificate's name is its holder's role: raft and the servers' own
// endpoints are for server certificates, node endpoints for client and
// server certificates, and only a server may send a request marked
// forwarded. peer_auth.go holds the certificate checks.
//
// The servers' own endpoints (Eval.Dequeue, Ack, Nack, Update, Create,
// Reblock, Plan.Submit, Operator.RaftAddPeer) call requireServer first,
// and forward calls checkForwarded for every request (server_secret.go):
// the one place a caller is found to be a server. A call made in this
// process with no remote caller behind it (rpcx.Peer.InProcess, no Addr)
// is the server itself. With certificate roles checked, a server
// certificate is the proof. Without them but with ACLs on, the proof is
// the cluster's server secret: a server sends it as the AuthToken of its
// own calls and as the ServerToken of a request it forwards. The first
// leader with ACLs on makes the secret (its random value in the raft
// entry, never made in the FSM); it replicates like any state and no
// endpoint answers it. With neither, nothing is checked there.
// TestEveryRPCEndpointRefusesACallerWithoutAToken walks the RPC registry,
// so an endpoint added without a check fails it.
//
// Time comes from an injected Clock everywhere outside raft and the FSM, so
// tests drive heartbeats, nack timeouts and delays with a FakeClock.
// Randomness outside raft (the heartbeat TTL stagger) comes from a source
// seeded with Config.Seed.
//
// # Dependencies between components
//
// Leader components take what they need of the server as a small
// interface, not *Server: the plan applier planner.Config, the
// heartbeater (nomad/heartbeat) a StateReader and a StatusWriter (with
// its tuning, clock and random source in heartbeat.Config), garbage
// collection gcDeps. The server, or a small adapter over it, implements
// each; a test runs a component alone against an in-memory twin (a real
// state store, raft entries recorded instead of committed), or wraps the
// server's side through serverOptions, which only tests pass to newServer.
// No production type keeps a hook that a test sets once it runs.
//
// The RPC endpoints (Job, Node, Eval, KV, ...) hold the server the same
// way: each endpoint's field srv is an unexported interface, declared next
// to the endpoint (jobServer, nodeServer, kvServer, ...), that lists
// exactly the server methods it calls, built from one-method pieces most
// share (forwarding, the token and peer checks, blockingQuery, State,
// raftApply; endpoint_deps.go). Where an endpoint needs one of the
// server's components (the eval broker, the heartbeat timers, raft's
// membership) or a configuration value, a small accessor on *Server
// answers it, typed as narrowly as the endpoint uses it. *Server
// implements every one (checked at compile time); a test can drive an
// endpoint with a fake of its interface alone (kv_endpoint_deps_test.go),
// and an endpoint that starts to need more of the server says so in its
// interface.
package nomad

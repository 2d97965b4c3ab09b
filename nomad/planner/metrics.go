package planner

// The applier's metrics carry Nomad's names (go-metrics puts "nomad." in
// front of each key), as the server's do; the queue's depth gauge is the
// server's, emitted with its other queue gauges from Queue.Stats.
var (
	keyPlanEvaluate     = []string{"nomad", "plan", "evaluate"}
	keyPlanApply        = []string{"nomad", "plan", "apply"}
	keyPlanNodeRejected = []string{"nomad", "plan", "node_rejected"}
	// keyPlanPlaced counts the new allocations plans committed (Drover's;
	// Nomad has no such counter).
	keyPlanPlaced = []string{"nomad", "plan", "allocs_placed"}
)

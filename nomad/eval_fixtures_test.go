package nomad

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// testEpoch is the fake clocks' start in the server's tests.
var testEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testEval is a pending service eval of jobID, as a job register makes.
func testEval(jobID string, priority int, index uint64) *structs.Evaluation {
	return &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: "default", Priority: priority, Type: "service",
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: jobID, Status: structs.EvalStatusPending,
		CreateIndex: index, ModifyIndex: index,
	}
}

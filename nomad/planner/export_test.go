package planner

// EvaluatePlan is evaluatePlan for the tests of package planner_test, which
// check a plan against a snapshot without running an applier.
var EvaluatePlan = evaluatePlan

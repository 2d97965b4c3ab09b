package httpapi

import (
	"os"
	"testing"

	"github.com/drover-sched/drover/helper/childproc"
)

// TestMain lets this test binary stand in for the drover executable when
// the agent runs it as a child (a job parse child for /v1/jobs/parse, a
// template render child for a task), as Drover's main does.
func TestMain(m *testing.M) {
	if code, ok := childproc.MaybeRun(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

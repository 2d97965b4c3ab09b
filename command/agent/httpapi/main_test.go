package httpapi

import (
	"os"
	"testing"

	"github.com/drover-sched/drover/helper/childproc"
)

// TestMain lets this test binary stand in for the drover executable when
// /v1/jobs/parse runs it as a job parse child, as Drover's main does.
func TestMain(m *testing.M) {
	if code, ok := childproc.MaybeRun(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

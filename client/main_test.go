package client

import (
	"os"
	"testing"

	"github.com/drover-sched/drover/helper/childproc"
)

// TestMain lets this test binary stand in for the drover executable when
// a task's templates render in a child process, as Drover's main does.
func TestMain(m *testing.M) {
	if code, ok := childproc.MaybeRun(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

package agent

import (
	"os"
	"testing"
)

// TestMain lets this test binary stand in for the drover executable when
// /v1/jobs/parse runs it as a job parse child, as Drover's main does.
func TestMain(m *testing.M) {
	if code, ok := MaybeRunParseChild(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

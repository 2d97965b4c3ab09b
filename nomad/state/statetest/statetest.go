// Package statetest has the state store helpers of tests outside
// nomad/state. Only tests import it: the drover binary carries no test code
// (binary_deps_test.go at the module root). The state package's own tests
// have their twin of New in a _test.go file, since they cannot import a
// package that imports state.
package statetest

import (
	"testing"

	"github.com/drover-sched/drover/nomad/state"
)

// New returns an empty state store, or fails the test.
func New(t testing.TB) *state.StateStore {
	t.Helper()
	s, err := state.NewStateStore(&state.StateStoreConfig{})
	if err != nil {
		t.Fatalf("creating state store: %v", err)
	}
	return s
}

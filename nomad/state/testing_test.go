package state

import "testing"

// testStateStore returns an empty store for this package's tests. Tests of
// other packages use statetest.New.
func testStateStore(t testing.TB) *StateStore {
	t.Helper()
	s, err := NewStateStore(&StateStoreConfig{})
	if err != nil {
		t.Fatalf("creating state store: %v", err)
	}
	return s
}

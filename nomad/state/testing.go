package state

import "testing"

// TestStateStore returns an empty store for tests of other packages. It
// lives in a non-test file so those packages can import it.
func TestStateStore(t testing.TB) *StateStore {
	t.Helper()
	s, err := NewStateStore(&StateStoreConfig{})
	if err != nil {
		t.Fatalf("creating state store: %v", err)
	}
	return s
}

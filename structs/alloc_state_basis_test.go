package structs

import "testing"

func TestStaleClientReport(t *testing.T) {
	a := &Allocation{ID: "a", AllocModifyIndex: 10, ClientStatus: AllocClientStatusUnknown}
	cases := []struct {
		name   string
		basis  uint64
		status string
		stale  bool
	}{
		{"based on an older version, running", 9, AllocClientStatusRunning, true},
		{"based on an older version, pending", 3, AllocClientStatusPending, true},
		{"based on the current version", 10, AllocClientStatusRunning, false},
		{"based on a version this server has not applied yet", 11, AllocClientStatusRunning, false},
		{"without a basis (an older client)", 0, AllocClientStatusRunning, false},
		{"terminal, complete, on an older version", 9, AllocClientStatusComplete, false},
		{"terminal, failed, on an older version", 9, AllocClientStatusFailed, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := &Allocation{ID: "a", AllocModifyIndex: tc.basis, ClientStatus: tc.status}
			if got := a.StaleClientReport(u); got != tc.stale {
				t.Fatalf("stale = %v, want %v", got, tc.stale)
			}
		})
	}
}

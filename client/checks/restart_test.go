package checks

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestRestartTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type obs struct {
		at     time.Duration
		status string
		want   bool
	}
	cases := []struct {
		name string
		cr   *structs.CheckRestart
		seq  []obs
	}{
		{"restarts after limit consecutive failures", &structs.CheckRestart{Limit: 3},
			[]obs{{1, StatusFailure, false}, {2, StatusFailure, false}, {3, StatusFailure, true}, {4, StatusFailure, false}}},
		{"a pass starts the count again", &structs.CheckRestart{Limit: 2},
			[]obs{{1, StatusFailure, false}, {2, StatusSuccess, false}, {3, StatusFailure, false}, {4, StatusFailure, true}}},
		{"failures in the grace period do not count", &structs.CheckRestart{Limit: 1, Grace: 10 * time.Second},
			[]obs{{time.Second, StatusFailure, false}, {9 * time.Second, StatusFailure, false}, {10 * time.Second, StatusFailure, true},
				{15 * time.Second, StatusFailure, false}, {20 * time.Second, StatusFailure, true}}},
		{"warnings count unless ignored", &structs.CheckRestart{Limit: 1},
			[]obs{{1, StatusWarning, true}}},
		{"ignored warnings do not count", &structs.CheckRestart{Limit: 1, IgnoreWarnings: true},
			[]obs{{1, StatusWarning, false}, {2, StatusWarning, false}}},
		{"no limit, no restart", &structs.CheckRestart{},
			[]obs{{1, StatusFailure, false}, {2, StatusFailure, false}}},
		{"no block, no restart", nil, []obs{{1, StatusFailure, false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newRestartTracker(c.cr, t0)
			for i, o := range c.seq {
				if got := tr.observe(t0.Add(o.at), o.status); got != o.want {
					t.Fatalf("observation %d (%s at +%v): restart %v, want %v", i, o.status, o.at, got, o.want)
				}
			}
		})
	}
}

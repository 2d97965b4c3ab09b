//go:build e2e && soak

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// The soak's reconnect bound counts per episode: an alloc reconnected,
// decided, and disconnected again is not "undecided" since the first
// reconnect (seed 1795661005003694337 printed ca7876fa "undecided" 5m38s
// and 8m17s after its first reconnect, each time in one check only).
func TestSoakReconnectEpisodes(t *testing.T) {
	j := flapJob{id: "longest", count: 2}
	t0 := time.Now().Add(-10 * time.Minute)
	states := func(marks ...time.Time) []*api.AllocState {
		var out []*api.AllocState
		for _, m := range marks {
			out = append(out, &api.AllocState{Field: "ClientStatus", Value: "unknown", Time: m})
			out = append(out, &api.AllocState{Field: "ClientStatus", Value: "running", Time: m.Add(time.Second)})
		}
		return out
	}
	g0 := &api.Allocation{ID: "e3ed40b0-0000", Name: "longest.g[0]", NodeName: "c3", DesiredStatus: "run", ClientStatus: "running"}
	orig := &api.Allocation{ID: "ca7876fa-0000", Name: "longest.g[1]", NodeName: "c2", DesiredStatus: "run", ClientStatus: "running"}
	repl := &api.Allocation{ID: "3e4f3f2c-0000", Name: "longest.g[1]", NodeName: "c1", DesiredStatus: "run", ClientStatus: "running"}
	e := newReconnectEpisodes()

	// Episode 1: reported running after unknown, seen pending once...
	orig.AllocStates = states(t0)[:1]
	if msg, ok := runningInvariant(j, []*api.Allocation{g0, orig}, e.observe([]*api.Allocation{g0, orig})); !ok {
		t.Fatalf("first sight of a pending reconnect: %s", msg)
	}
	e.since[orig.ID] = t0 // ...ten minutes ago.
	// Decided at once: the reconnect is recorded.
	orig.AllocStates = states(t0)
	if msg, ok := runningInvariant(j, []*api.Allocation{g0, orig}, e.observe([]*api.Allocation{g0, orig})); !ok {
		t.Fatalf("decided reconnect: %s", msg)
	}
	// Episode 2, now: unknown again, replaced on c1, reported running
	// again. Pending for one poll is within the bound.
	t1 := time.Now().Add(-time.Second)
	orig.AllocStates = append(states(t0), &api.AllocState{Field: "ClientStatus", Value: "unknown", Time: t1})
	all := []*api.Allocation{g0, orig, repl}
	if msg, ok := runningInvariant(j, all, e.observe(all)); !ok {
		t.Fatalf("a new reconnect episode read as undecided since the first: %s", msg)
	}
	if e.overdue(all) {
		t.Fatal("a new episode is overdue")
	}
	// Still undecided past the bound: a persistent violation.
	e.since[orig.ID] = time.Now().Add(-2 * reconnectBound)
	msg, ok := runningInvariant(j, all, e.observe(all))
	if ok || !strings.Contains(msg, "still undecided") || !e.overdue(all) {
		t.Fatalf("undecided past the bound: ok=%v overdue=%v %s", ok, e.overdue(all), msg)
	}
}

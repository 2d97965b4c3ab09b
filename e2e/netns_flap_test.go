//go:build e2e

package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// spreadJob is a service job of count tasks on distinct clients, each
// task sleeping under its own marker; group is extra group configuration.
func spreadJob(id string, count int, m taskMarker, group string) string {
	return strings.Replace(strings.Replace(serviceJob(id, m, group), "count = 1", fmt.Sprintf("count = %d", count), 1),
		`type        = "service"`, `type        = "service"
  constraint {
    distinct_hosts = true
  }`, 1)
}

// flapJob is one job of the flapping test.
type flapJob struct {
	id      string
	m       taskMarker
	count   int
	replace bool // whether a disconnect places replacements
}

// flapInvariants checks, at one moment, what must hold at every moment of
// a flapping link: no job has more than count allocs running (as the
// servers see them), nor two of one name, except while a reconnect is
// being decided (an alloc reported running again after being unknown,
// before its reconnect eval stopped one of the two): such a pair must be
// resolved within reconnectBound, which pending tracks (alloc ID to the
// first time seen pending). No two task processes of one alloc name run
// off the flapping node; a job that does not replace never has more than
// one process per name, and one that does at most two (the flapping
// node's, whose client may not have heard of its replacement yet, and the
// replacement's).
func flapInvariants(s *agent, jobs []flapJob, flapper string, pending map[string]time.Time) (string, bool) {
	for _, j := range jobs {
		allocs, err := jobAllocs(s, j.id)
		if err != nil {
			return "", true // no answer is not a violation
		}
		if msg, ok := runningInvariant(j, allocs, pending); !ok {
			return msg, false
		}
		byID := map[string]string{}
		for _, a := range allocs {
			byID[a.ID] = a.NodeName + " " + a.Name
		}
		procs := j.m.procs()
		perName, offFlapper := map[string]int{}, map[string]int{}
		for id := range procs {
			where, ok := byID[id]
			if !ok {
				continue // placed after the alloc list was read
			}
			node, name, _ := strings.Cut(where, " ")
			perName[name]++
			if node != flapper {
				offFlapper[name]++
			}
		}
		limit := 1
		if j.replace {
			limit = 2
		}
		for name, n := range perName {
			if n > limit || offFlapper[name] > 1 {
				return fmt.Sprintf("%s: %d processes of %s (%d off %s): %v; %s", j.id, n, name, offFlapper[name], flapper, procs, describeAllocs(allocs)), false
			}
		}
	}
	return "", true
}

// runningInvariant checks one job's allocs as the servers see them: no
// more running than count, nor two of one name, beyond a reconnect being
// decided (an alloc reported running again after being unknown, before
// its reconnect eval stopped one of the two), and that within
// reconnectBound, which pending tracks (per reconnect: the alloc ID and the
// unknown mark it comes back from, to the first time seen pending; nil:
// not tracked). An alloc that disconnects again is a new reconnect, timed
// from its own start.
func runningInvariant(j flapJob, allocs []*api.Allocation, pending map[string]time.Time) (string, bool) {
	r := runningAllocs(allocs)
	names := map[string]int{}
	reconnecting := 0
	for _, a := range r {
		if reconnectPending(a) {
			reconnecting++
			if pending != nil {
				key := a.ID + "@" + lastUnknownAt(a).String()
				if _, ok := pending[key]; !ok {
					pending[key] = time.Now()
				}
				if since := time.Since(pending[key]); since > reconnectBound {
					return fmt.Sprintf("%s: alloc %s reported running after unknown %s ago and its reconnect is still undecided: %s",
						j.id, a.ID[:8], since.Round(time.Millisecond), describeAllocs(allocs)), false
				}
			}
			continue
		}
		names[a.Name]++
	}
	if len(r)-reconnecting > j.count {
		return fmt.Sprintf("%s: %d allocs running, count %d: %s", j.id, len(r), j.count, describeAllocs(allocs)), false
	}
	for name, n := range names {
		if n > 1 {
			return fmt.Sprintf("%s: %d running allocs named %s: %s", j.id, n, name, describeAllocs(allocs)), false
		}
	}
	return "", true
}

// violationConfirmer reports a violation only when two consecutive checks
// find the very same one. A check reads the alloc list and then each
// alloc, in separate requests, so it can straddle the one raft entry in
// which a reconnect records the kept alloc and stops the other, and see
// half of it; a real violation is still there at the next check, with the
// same allocs in the same states.
type violationConfirmer struct{ last string }

// seen records a failed check's description and says whether the
// previous check failed identically.
func (v *violationConfirmer) seen(why string) bool {
	same := why == v.last
	v.last = why
	return same
}

// describeAllocStates lists an alloc's AllocState history, for failure
// messages.
func describeAllocStates(a *api.Allocation) string {
	var hist []string
	for _, st := range a.AllocStates {
		hist = append(hist, fmt.Sprintf("%s=%s@%s", st.Field, st.Value, st.Time.Format("15:04:05.000")))
	}
	return fmt.Sprintf("desired=%s client=%s modified@%d states %v", a.DesiredStatus, a.ClientStatus, a.ModifyIndex, hist)
}

// reconnectBound is how long a reconnect may stay undecided: the report's
// reconnect eval must run and stop one of the pair by then.
const reconnectBound = 15 * time.Second

// reconnectPending reports whether the alloc was reported again after
// being unknown and the reconnect has not been recorded yet: its last
// ClientStatus AllocState is still unknown.
func reconnectPending(a *api.Allocation) bool {
	last := ""
	for _, st := range a.AllocStates {
		if st.Field == "ClientStatus" {
			last = st.Value
		}
	}
	return last == "unknown" && a.ClientStatus != "unknown"
}

// lastUnknownAt is when a was last marked unknown (zero if never).
func lastUnknownAt(a *api.Allocation) time.Time {
	var at time.Time
	for _, st := range a.AllocStates {
		if st.Field == "ClientStatus" && st.Value == "unknown" {
			at = st.Time
		}
	}
	return at
}

// envDuration reads a duration from the environment, or returns def.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: want a duration such as 90s or 10m: %v", name, v, err)
	}
	return d
}

// envSeed reads a seed from the environment, or makes one.
func envSeed(t *testing.T, name string) int64 {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an integer: %v", name, v, err)
		}
		return seed
	}
	return time.Now().UnixNano()
}

// A client's link goes down and up every few seconds for a minute
// (NETNS_FLAP_DURATION; the schedule is seeded, NETNS_FLAP_SEED replays
// it). Throughout, the servers never run more than count allocs of a job
// nor two of one name, and task processes stay within what the group's
// disconnect block allows (replace = false: one per name). After
// the last heal the node is ready, exactly count allocs and processes run
// per job, and the job that never replaces still has only its two allocs.
func TestNetnsFlappingLink(t *testing.T) {
	elapsed(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 1, clients: []string{"c1", "c2", "c3"}})
	s := c.servers[0]
	jobs := []flapJob{
		{id: "noreplace", count: 2, m: newTaskMarker(t)},
		{id: "replaced", count: 2, m: newTaskMarker(t), replace: true},
		{id: "downed", count: 2, m: newTaskMarker(t), replace: true},
	}
	groups := map[string]string{
		"noreplace": `
    disconnect {
      lost_after = "5m"
      replace    = false
      reconcile  = "keep_original"
    }`,
		"replaced": `
    disconnect {
      lost_after = "5m"
    }`,
		"downed": "",
	}
	for _, j := range jobs {
		registerJob(t, s, spreadJob(j.id, j.count, j.m, groups[j.id]), 10*time.Second)
	}
	// Flap the client that runs the most of them.
	perNode := map[string]int{}
	for _, j := range jobs {
		waitFor(t, 30*time.Second, func() (bool, string) {
			allocs, err := jobAllocs(s, j.id)
			if err != nil {
				return false, err.Error()
			}
			return len(runningAllocs(allocs)) == j.count && len(j.m.procs()) == j.count, j.id + ": " + describeAllocs(allocs)
		})
		allocs, _ := jobAllocs(s, j.id)
		for _, a := range allocs {
			perNode[a.NodeName]++
		}
	}
	flapper := "c1"
	for name, n := range perNode {
		if n > perNode[flapper] || (n == perNode[flapper] && name < flapper) {
			flapper = name
		}
	}
	node := c.nodes[flapper]
	seed := envSeed(t, "NETNS_FLAP_SEED")
	rnd := rand.New(rand.NewSource(seed))
	duration := envDuration(t, "NETNS_FLAP_DURATION", time.Minute)
	t.Logf("flapping %s (runs %d of the allocs) for %s, seed %d (NETNS_FLAP_SEED replays it)", flapper, perNode[flapper], duration, seed)

	start := time.Now()
	pending := map[string]time.Time{}
	var confirm violationConfirmer
	halfSeen := 0 // failed checks not confirmed by the next one
	up, flips, checks := true, 0, 0
	next := start.Add(time.Duration(1000+rnd.Intn(2000)) * time.Millisecond)
	waitFor(t, duration+time.Minute, func() (bool, string) {
		checks++
		why, ok := flapInvariants(s, jobs, flapper, pending)
		if ok {
			confirm.last = ""
		} else if !confirm.seen(why) {
			ok = true
			halfSeen++
			if halfSeen <= 5 {
				t.Logf("a check failed (not yet a violation: the next check must confirm it): %s", why)
			}
		}
		if !ok {
			var hist []string
			for _, j := range jobs {
				allocs, _ := jobAllocs(s, j.id)
				for _, a := range allocs {
					hist = append(hist, fmt.Sprintf("%s %s %s: %s", j.id, a.ID[:8], a.NodeName, describeAllocStates(a)))
				}
				hist = append(hist, j.id+" evals: "+describeEvals(s, j.id))
			}
			t.Fatalf("invariant broken %s into the flapping (link %s, %d flips): %s\nAllocStates now:\n%s", time.Since(start).Round(time.Millisecond),
				map[bool]string{true: "up", false: "down"}[up], flips, why, strings.Join(hist, "\n"))
		}
		now := time.Now()
		if now.Before(next) {
			return false, ""
		}
		if up {
			node.cut()
			next = now.Add(time.Duration(1000+rnd.Intn(3000)) * time.Millisecond)
		} else {
			node.heal()
			next = now.Add(time.Duration(1000+rnd.Intn(4000)) * time.Millisecond)
		}
		up = !up
		flips++
		return up && now.Sub(start) >= duration, ""
	})
	t.Logf("flapped %d times in %s, %d invariant checks, no violation (%d failed checks not confirmed by the next)", flips, time.Since(start).Round(time.Millisecond), checks, halfSeen)

	healAt := time.Now()
	settled := func() (bool, string) {
		if st := nodeStatus(s, flapper); st != "ready" {
			return false, flapper + " is " + st
		}
		if why, ok := flapInvariants(s, jobs, "", nil); !ok {
			return false, why
		}
		for _, j := range jobs {
			allocs, err := jobAllocs(s, j.id)
			if err != nil {
				return false, err.Error()
			}
			r, p := runningAllocs(allocs), j.m.procs()
			if len(r) != j.count || len(p) != j.count {
				return false, fmt.Sprintf("%s: %d running, %d processes: %s", j.id, len(r), len(p), describeAllocs(allocs))
			}
			for _, a := range r {
				if p[a.ID] == 0 {
					return false, fmt.Sprintf("%s: running alloc %s has no process", j.id, a.ID[:8])
				}
			}
		}
		return true, ""
	}
	waitForStable(t, 90*time.Second, 3*time.Second, settled)
	for _, j := range jobs {
		waitForEvalsDone(t, s, j.id)
	}
	if ok, why := settled(); !ok {
		t.Fatalf("after every eval finished: %s", why)
	}
	t.Logf("settled %s after the last heal", time.Since(healAt).Round(time.Millisecond))
	for _, j := range jobs {
		allocs, _ := jobAllocs(s, j.id)
		t.Logf("%s: %d allocs in all: %s", j.id, len(allocs), describeAllocs(allocs))
		if !j.replace && len(allocs) != j.count {
			t.Errorf("%s never replaces, yet has %d allocs, want %d: %s", j.id, len(allocs), j.count, describeAllocs(allocs))
		}
	}
}

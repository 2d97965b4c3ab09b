//go:build e2e && soak

package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// The soak: a randomized, seeded schedule of network partitions over a
// 3-server, 4-client cluster running a few service and batch jobs, for
// SOAK_DURATION (10m by default; SOAK_SEED replays a schedule). Run it
// with `make soak`; it is not part of `make e2e`.
//
// Each cycle injects one fault (or two at once), holds it for a few
// seconds, heals everything, and requires the cluster to converge before
// the next. Checked continuously, on every poll: no job has more allocs
// running than its count, nor two of one name, beyond a reconnect being
// decided (which must be decided within reconnectBound). Checked at every
// convergence: every client ready, every job exactly count allocs running
// with one task process per alloc name, every registration the cluster
// acknowledged present and placed once.

// soakJob is one long-running job of the soak.
type soakJob struct {
	flapJob
	hcl string
}

func soakJobs(t *testing.T) []soakJob {
	var out []soakJob
	add := func(id, typ string, count int, replace bool, group string) {
		m := newTaskMarker(t)
		hcl := strings.Replace(spreadJob(id, count, m, group), `type        = "service"`, fmt.Sprintf(`type        = %q`, typ), 1)
		if typ == "batch" {
			// A batch task that ends is done; these never end, and their
			// reschedule policy must not give up during the soak.
			hcl = strings.Replace(hcl, "    task \"t\" {", `    reschedule {
      attempts  = 0
      unlimited = true
      delay     = "1s"
    }
    task "t" {`, 1)
		}
		out = append(out, soakJob{flapJob: flapJob{id: id, count: count, m: m, replace: replace}, hcl: hcl})
	}
	add("keep", "service", 2, true, disconnectGroup("keep_original", true))
	add("best", "service", 3, true, disconnectGroup("best_score", true))
	add("longest", "service", 2, true, disconnectGroup("longest_running", true))
	add("norepl", "service", 2, false, disconnectGroup("keep_original", false))
	add("plain", "service", 2, true, "")
	add("batch", "batch", 2, true, "")
	return out
}

// soakFault is one injected fault: its name, and how to undo it.
type soakFault struct {
	name string
	heal func()
	// cutServers are servers the test cannot reach while it lasts.
	cutServers map[string]bool
}

func TestNetnsSoak(t *testing.T) {
	duration := envDuration(t, "SOAK_DURATION", 10*time.Minute)
	seed := envSeed(t, "SOAK_SEED")
	rnd := rand.New(rand.NewSource(seed))
	t.Logf("soak for %s, seed %d (SOAK_SEED=%d replays the schedule)", duration, seed, seed)

	clients := []string{"c1", "c2", "c3", "c4"}
	c := startNetnsCluster(t, netnsClusterSpec{servers: 3, clients: clients})
	keepSoakLogs(t, c)
	jobs := soakJobs(t)
	var flapJobs []flapJob
	for _, j := range jobs {
		registerJob(t, c.servers[0], j.hcl, 10*time.Second)
		flapJobs = append(flapJobs, j.flapJob)
	}

	var (
		acked      []string
		registered int
		checks     int
		cycles     int
		faults     = map[string]int{}
		violations []string
		pending    = newReconnectEpisodes()
		confirm    violationConfirmer
		halfSeen   int // failed checks not confirmed by the next one
	)
	violate := func(format string, args ...any) {
		v := fmt.Sprintf(format, args...)
		violations = append(violations, v)
		t.Errorf("violation: %s", v)
	}
	// reachable returns a server the test can reach now.
	reachable := func(f *soakFault) *agent {
		for _, s := range c.servers {
			if f == nil || !f.cutServers[s.name] {
				return s
			}
		}
		return nil
	}
	// checkRunning is the continuous check.
	checkRunning := func(f *soakFault) {
		s := reachable(f)
		checks++
		switch why, persistent, ok := soakRunningInvariant(s, flapJobs, pending); {
		case ok:
			confirm.last = ""
		case persistent:
			// Measured over reconnectBound already: no second look is
			// needed (and its message, which names the time, never
			// repeats exactly).
			confirm.last = ""
			violate("%s", why)
			t.Logf("evaluations and alloc versions at the finding:\n%s", soakDiagnose(s, flapJobs))
		case confirm.seen(why):
			violate("%s", why)
		default:
			halfSeen++
			if halfSeen <= 5 {
				t.Logf("a check failed (not yet a violation: the next check must confirm it): %s", why)
			}
		}
	}
	register := func(f *soakFault) {
		s := c.servers[rnd.Intn(len(c.servers))]
		if f != nil && f.cutServers[s.name] {
			return
		}
		id := fmt.Sprintf("ack-%03d", registered)
		registered++
		q := quickAPI(t, s, 5*time.Second)
		job, err := q.Jobs().ParseHCL(mockJob(id, 1), true)
		if err != nil {
			return
		}
		if _, _, err := q.Jobs().Register(job, nil); err == nil {
			acked = append(acked, id)
		}
	}
	verified := 0 // acked[:verified] were present and placed at a convergence
	converge := func() {
		s := c.servers[0]
		start := time.Now()
		ok := false
		var why string
		for time.Since(start) < 2*time.Minute {
			checkRunning(nil)
			if ok, why = soakConverged(s, jobs, clients, acked[verified:]); ok {
				verified = len(acked)
				break
			}
			select {
			case <-time.After(250 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
		}
		if !ok {
			violate("no convergence within 2m of healing everything (cycle %d): %s", cycles, why)
			t.FailNow()
		}
	}

	converge()
	started := time.Now()
	for time.Since(started) < duration {
		cycles++
		f := injectSoakFault(t, c, rnd, clients)
		faults[f.name]++
		hold := time.Duration(3000+rnd.Intn(17000)) * time.Millisecond
		until := time.Now().Add(hold)
		nextReg := time.Now()
		for time.Now().Before(until) {
			checkRunning(f)
			if time.Now().After(nextReg) {
				register(f)
				nextReg = time.Now().Add(time.Duration(1000+rnd.Intn(4000)) * time.Millisecond)
			}
			select {
			case <-time.After(250 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
		}
		f.heal()
		converge()
	}

	// Every acknowledged registration, once more at the end.
	verified = 0
	converge()

	var names []string
	for n := range faults {
		names = append(names, fmt.Sprintf("%s x%d", n, faults[n]))
	}
	sort.Strings(names)
	total := 0
	for _, n := range faults {
		total += n
	}
	summary := fmt.Sprintf("soak: seed %d, %s, %d cycles, %d faults injected (%s), %d registrations tried, %d acknowledged (all present), %d invariant checks (%d failed but not confirmed by the next), %d violations",
		seed, time.Since(started).Round(time.Second), cycles, total, strings.Join(names, ", "), registered, len(acked), checks, halfSeen, len(violations))
	t.Log(summary)
	fmt.Println(summary)
	for _, v := range violations {
		fmt.Println("violation:", v)
	}
}

// soakRunningInvariant is flapInvariants' server-side half, for any fault:
// never more running allocs than count, nor two of one name, beyond a
// reconnect being decided, and that within reconnectBound. A reconnect
// undecided past reconnectBound is persistent by construction (it has
// been seen undecided for that long) and is reported as such.
func soakRunningInvariant(s *agent, jobs []flapJob, episodes *reconnectEpisodes) (why string, persistent, ok bool) {
	for _, j := range jobs {
		allocs, err := jobAllocs(s, j.id)
		if err != nil {
			continue // no answer (no leader) is not a violation
		}
		pending := episodes.observe(allocs)
		if msg, ok := runningInvariant(j, allocs, pending); !ok {
			return msg + episodes.describe(allocs), episodes.overdue(allocs), false
		}
	}
	return "", false, true
}

// reconnectEpisodes tracks, per alloc, the reconnect the checks see
// pending. An alloc can be disconnected and reconnected many times in a
// soak; each time is its own episode, named by the time of the unknown
// mark it reconnects from, and its undecided time counts from the first
// check that saw that episode pending. (Keyed by alloc ID alone, as the
// flap test keeps it, the first episode's time carried over to every
// later one: a reconnect decided within one poll read as undecided for
// minutes.)
type reconnectEpisodes struct {
	// since is runningInvariant's map: alloc ID to the first time the
	// current episode was seen pending.
	since map[string]time.Time
	// episode is the unknown mark each tracked alloc reconnects from.
	episode map[string]time.Time
}

func newReconnectEpisodes() *reconnectEpisodes {
	return &reconnectEpisodes{since: map[string]time.Time{}, episode: map[string]time.Time{}}
}

// observe forgets the allocs of allocs whose reconnect was decided, or
// that reconnect from a newer unknown mark than the one tracked, and
// returns the map runningInvariant fills and reads.
func (e *reconnectEpisodes) observe(allocs []*api.Allocation) map[string]time.Time {
	for _, a := range allocs {
		at, ok := lastUnknownMark(a)
		if !reconnectPending(a) || !ok {
			delete(e.since, a.ID)
			delete(e.episode, a.ID)
			continue
		}
		if prev, seen := e.episode[a.ID]; !seen || !prev.Equal(at) {
			delete(e.since, a.ID)
			e.episode[a.ID] = at
		}
	}
	return e.since
}

// overdue reports whether an alloc of allocs has had its reconnect
// undecided for longer than reconnectBound.
func (e *reconnectEpisodes) overdue(allocs []*api.Allocation) bool {
	for _, a := range allocs {
		if at, ok := e.since[a.ID]; ok && reconnectPending(a) && time.Since(at) > reconnectBound {
			return true
		}
	}
	return false
}

// describe lists the pending allocs' versions and AllocStates.
func (e *reconnectEpisodes) describe(allocs []*api.Allocation) string {
	var out []string
	for _, a := range allocs {
		if reconnectPending(a) {
			out = append(out, fmt.Sprintf("%s on %s alloc_modify_index=%d %s", a.ID[:8], a.NodeName, a.AllocModifyIndex, describeAllocStates(a)))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; pending: " + strings.Join(out, "; ")
}

// lastUnknownMark is the time of the alloc's newest ClientStatus=unknown
// AllocState.
func lastUnknownMark(a *api.Allocation) (time.Time, bool) {
	var at time.Time
	ok := false
	for _, st := range a.AllocStates {
		if st.Field == "ClientStatus" && st.Value == "unknown" {
			at, ok = st.Time, true
		}
	}
	return at, ok
}

// soakDiagnose lists each job's evaluations (status, trigger, node) and
// its allocs' versions, for a finding whose servers' logs the run keeps
// only with SOAK_LOG_DIR.
func soakDiagnose(s *agent, jobs []flapJob) string {
	var b strings.Builder
	for _, j := range jobs {
		evals, _, err := s.api().Jobs().Evaluations(j.id, nil)
		if err != nil {
			fmt.Fprintf(&b, "%s: evaluations: %v\n", j.id, err)
			continue
		}
		for _, ev := range evals {
			fmt.Fprintf(&b, "%s: eval %s %s triggered_by=%s node=%s modify_index=%d %s\n", j.id, ev.ID[:8], ev.Status,
				ev.TriggeredBy, shortNode(ev.NodeID), ev.ModifyIndex, ev.StatusDescription)
		}
		allocs, err := jobAllocs(s, j.id)
		if err != nil {
			continue
		}
		for _, a := range allocs {
			if a.DesiredStatus == "run" {
				fmt.Fprintf(&b, "%s: alloc %s %s on %s modify_index=%d alloc_modify_index=%d %s\n", j.id, a.ID[:8], a.Name,
					a.NodeName, a.ModifyIndex, a.AllocModifyIndex, describeAllocStates(a))
			}
		}
	}
	return b.String()
}

func shortNode(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// keepSoakLogs writes every agent's output to SOAK_LOG_DIR/<name>.log
// when the test ends, if SOAK_LOG_DIR is set: the servers' logs are what
// explains a finding (plan refusals, eval statuses).
func keepSoakLogs(t *testing.T, c *netnsCluster) {
	dir := os.Getenv("SOAK_LOG_DIR")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("SOAK_LOG_DIR: %v", err)
	}
	t.Cleanup(func() {
		for name, node := range c.nodes {
			if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(node.log.String()), 0o644); err != nil {
				t.Errorf("keeping %s's log: %v", name, err)
			}
		}
		t.Logf("agents' logs kept in %s", dir)
	})
}

// soakConverged says whether the healed cluster has its full shape.
func soakConverged(s *agent, jobs []soakJob, clients []string, acked []string) (bool, string) {
	for _, name := range clients {
		if st := nodeStatus(s, name); st != "ready" {
			return false, name + " is " + st
		}
	}
	for _, j := range jobs {
		allocs, err := jobAllocs(s, j.id)
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		if len(r) != j.count {
			return false, fmt.Sprintf("%s: %d running, count %d: %s", j.id, len(r), j.count, describeAllocs(allocs))
		}
		byID := map[string]string{}
		for _, a := range allocs {
			byID[a.ID] = a.Name
		}
		perName := map[string]int{}
		for id := range j.m.procs() {
			perName[byID[id]]++
		}
		for _, a := range r {
			if perName[a.Name] != 1 {
				return false, fmt.Sprintf("%s: %d processes of %s: %v", j.id, perName[a.Name], a.Name, j.m.procs())
			}
		}
		if len(perName) != j.count {
			return false, fmt.Sprintf("%s: processes of %d names: %v", j.id, len(perName), j.m.procs())
		}
	}
	list, _, err := s.api().Jobs().List(nil)
	if err != nil {
		return false, err.Error()
	}
	have := map[string]bool{}
	for _, j := range list {
		have[j.ID] = true
	}
	for _, id := range acked {
		if !have[id] {
			return false, "acknowledged job " + id + " is missing"
		}
		allocs, err := jobAllocs(s, id)
		if err != nil {
			return false, err.Error()
		}
		if r := runningAllocs(allocs); len(r) != 1 {
			return false, fmt.Sprintf("%s: %d running: %s", id, len(r), describeAllocs(allocs))
		}
	}
	return true, ""
}

// injectSoakFault picks and applies one fault.
func injectSoakFault(t *testing.T, c *netnsCluster, rnd *rand.Rand, clients []string) *soakFault {
	t.Helper()
	pick := func(names []string) string { return names[rnd.Intn(len(names))] }
	client := c.nodes[pick(clients)]
	var servers []string
	for _, s := range c.servers {
		servers = append(servers, s.name)
	}
	leader, followers := c.leader(t, c.servers, "")
	ln := c.nodeOf(leader)
	switch k := rnd.Intn(6); k {
	case 0:
		client.cut()
		return &soakFault{name: "client cut", heal: client.heal}
	case 1:
		s := c.nodes[pick(servers)]
		s.cut()
		return &soakFault{name: "server cut", heal: s.heal, cutServers: map[string]bool{s.name: true}}
	case 2:
		for _, f := range followers {
			block(t, ln, c.nodeOf(f))
		}
		return &soakFault{name: "leader split from peers", heal: func() {
			for _, f := range followers {
				unblock(t, ln, c.nodeOf(f))
			}
		}}
	case 3:
		block(t, client, ln)
		return &soakFault{name: "client split from leader", heal: func() { unblock(t, client, ln) }}
	case 4:
		s := c.nodes[pick(servers)]
		client.cut()
		s.cut()
		return &soakFault{name: "client and server cut", heal: func() { client.heal(); s.heal() },
			cutServers: map[string]bool{s.name: true}}
	default:
		// Two clients cut at once.
		other := c.nodes[pick(clients)]
		for other == client {
			other = c.nodes[pick(clients)]
		}
		client.cut()
		other.cut()
		return &soakFault{name: "two clients cut", heal: func() { client.heal(); other.heal() }}
	}
}

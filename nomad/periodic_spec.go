package nomad

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	// Zone data is compiled in so that every server accepts and reads the
	// same time_zone names whatever its host has installed: a zone the
	// leader validated must still load on the server that leads next.
	_ "time/tzdata"

	"github.com/hashicorp/cronexpr"

	"github.com/drover-sched/drover/structs"
)

// periodicSpecCron is the only spec type: a cron expression.
const periodicSpecCron = "cron"

// periodicChildInfix separates a parent's ID from a child's launch time in
// the child's ID: "<parent>/periodic-<unix seconds>", as Nomad names them.
// Job IDs cannot contain '/', so the prefix "<parent>/periodic-" belongs to
// one parent only.
const periodicChildInfix = "/periodic-"

// ValidatePeriodic checks a job's periodic block: the cron expressions
// parse, the time zone exists, and the job is of a kind that can launch
// children. It returns nil for a job that is not periodic.
func ValidatePeriodic(job *structs.Job) error {
	if job == nil || !job.IsPeriodic() {
		return nil
	}
	switch job.Type {
	case structs.JobTypeBatch, structs.JobTypeSysBatch:
	default:
		return fmt.Errorf("periodic: only batch and sysbatch jobs can be periodic, job %q is %s", job.ID, job.Type)
	}
	if job.ParameterizedJob != nil {
		return fmt.Errorf("periodic: job %q cannot be both periodic and parameterized", job.ID)
	}
	_, err := parseSchedule(job.Periodic)
	return err
}

// cronSchedule is a parsed periodic block. It is not safe for concurrent
// use: cronexpr.Expression.Next keeps scratch state in the expression.
type cronSchedule struct {
	exprs []*cronexpr.Expression
	loc   *time.Location
}

// parseSchedule parses every cron expression of p and loads its zone (UTC
// when none is given).
func parseSchedule(p *structs.PeriodicConfig) (*cronSchedule, error) {
	if p.SpecType != "" && p.SpecType != periodicSpecCron {
		return nil, fmt.Errorf("periodic: spec type %q is not supported, use %q", p.SpecType, periodicSpecCron)
	}
	specs := p.Specs
	if p.Spec != "" {
		specs = append([]string{p.Spec}, specs...)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("periodic: a cron expression is required (cron or crons)")
	}
	s := &cronSchedule{loc: time.UTC}
	for _, spec := range specs {
		if err := checkCronShape(spec); err != nil {
			return nil, err
		}
		e, err := cronexpr.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("periodic: cron expression %q: %w", spec, err)
		}
		s.exprs = append(s.exprs, e)
	}
	if p.TimeZone != "" {
		loc, err := time.LoadLocation(p.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("periodic: time_zone %q is not a known IANA zone (for example \"America/New_York\" or \"UTC\"): %w", p.TimeZone, err)
		}
		s.loc = loc
	}
	return s, nil
}

// maxCronFields is the most fields a cron expression has: second, minute,
// hour, day of month, month, day of week and year.
const maxCronFields = 7

// checkCronShape refuses what cronexpr would read silently wrong: it
// ignores every field past the seventh and splits on any white space, so
// "0 3 * * * * * extra" or two expressions joined by a newline would turn
// into a schedule that launches a child every second.
func checkCronShape(spec string) error {
	for _, r := range spec {
		if unicode.IsControl(r) {
			return fmt.Errorf("periodic: cron expression %q contains a line break or control character; write one expression per entry of crons", spec)
		}
	}
	if n := len(strings.Fields(spec)); n > maxCronFields {
		return fmt.Errorf("periodic: cron expression %q has %d fields; at most %d are allowed ([second] minute hour day-of-month month day-of-week [year])", spec, n, maxCronFields)
	}
	return nil
}

// next returns the earliest launch strictly after from, read in the
// schedule's zone, or the zero time if no expression fires again.
func (s *cronSchedule) next(from time.Time) time.Time {
	var best time.Time
	for _, e := range s.exprs {
		t := e.Next(from.In(s.loc))
		if !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	return best
}

// latest returns the most recent launch in [due, now], given that due is
// a launch time not after now. It is how missed launches collapse into
// one: after a long pause (no leader, a stalled loop) the dispatcher runs
// the newest missed launch, not every one. Rather than walking every tick
// since due (a per-second cron over a long outage is many), it looks back
// from now over doubling windows until one holds a launch.
func (s *cronSchedule) latest(due, now time.Time) time.Time {
	walk := func(t time.Time) time.Time {
		for {
			n := s.next(t)
			if n.IsZero() || n.After(now) {
				return t
			}
			t = n
		}
	}
	for back := time.Second; ; back *= 2 {
		start := now.Add(-back)
		if !start.After(due) {
			return walk(due)
		}
		if t := s.next(start); !t.IsZero() && !t.After(now) {
			return walk(t)
		}
	}
}

// periodicChildID names the child a parent launches at launch.
func periodicChildID(parentID string, launch time.Time) string {
	return parentID + periodicChildInfix + strconv.FormatInt(launch.Unix(), 10)
}

// LaunchTime returns when a periodic child was launched, read from its ID,
// so callers can order children without loading them.
func LaunchTime(childID string) (time.Time, error) {
	i := strings.LastIndex(childID, periodicChildInfix)
	if i < 0 {
		return time.Time{}, fmt.Errorf("periodic: %q is not a periodic child job ID (<parent>%s<unix seconds>)", childID, periodicChildInfix)
	}
	secs, err := strconv.ParseInt(childID[i+len(periodicChildInfix):], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("periodic: launch time of child %q: %w", childID, err)
	}
	return time.Unix(secs, 0).UTC(), nil
}

// deriveChild makes the job a periodic parent launches at launch: a copy
// of the parent that is no longer periodic, named after the launch.
func deriveChild(parent *structs.Job, launch time.Time) *structs.Job {
	c := deriveChildJob(parent, periodicChildID(parent.ID, launch), launch)
	c.Periodic = nil
	return c
}

// deriveChildJob makes a child of parent named id, submitted at: a copy of
// the parent's current version with ParentID set, and the fields the state
// store fills left empty so it registers as a new job. Periodic launches
// and dispatches both derive their children with it, so every child is
// stored, counted in its parent's summary and listed the same way.
func deriveChildJob(parent *structs.Job, id string, at time.Time) *structs.Job {
	c := parent.Copy()
	c.ID = id
	c.Name = c.ID
	c.ParentID = parent.ID
	c.Status, c.StatusDescription = "", ""
	c.Stable = false
	c.Version = 0
	c.SubmitTime = at.UnixNano()
	c.CreateIndex, c.ModifyIndex, c.JobModifyIndex = 0, 0, 0
	return c
}

// nextPeriodicLaunch returns a job's next launch after from, for callers
// outside the dispatcher (job plan's NextPeriodicLaunch). It parses the
// block afresh, so it is safe to call from any goroutine.
func nextPeriodicLaunch(job *structs.Job, from time.Time) (time.Time, error) {
	if !job.IsPeriodic() {
		return time.Time{}, nil
	}
	s, err := parseSchedule(job.Periodic)
	if err != nil {
		return time.Time{}, err
	}
	return s.next(from), nil
}

// sameSchedule reports whether two periodic blocks launch at the same
// times (prohibit_overlap and enabled do not move launches).
func sameSchedule(a, b *structs.PeriodicConfig) bool {
	if a.Spec != b.Spec || a.SpecType != b.SpecType || a.TimeZone != b.TimeZone || len(a.Specs) != len(b.Specs) {
		return false
	}
	for i := range a.Specs {
		if a.Specs[i] != b.Specs[i] {
			return false
		}
	}
	return true
}

package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func mustSchedule(t *testing.T, p *structs.PeriodicConfig) *cronSchedule {
	t.Helper()
	s, err := parseSchedule(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestPeriodicScheduleNextReadsTheSpecInItsZone(t *testing.T) {
	cases := []struct {
		name string
		p    structs.PeriodicConfig
		from string
		want string
	}{
		{"every quarter hour in UTC", structs.PeriodicConfig{Spec: "*/15 * * * *"}, "2026-01-15T10:07:00Z", "2026-01-15T10:15:00Z"},
		{"a launch time itself is not the next launch", structs.PeriodicConfig{Spec: "*/15 * * * *"}, "2026-01-15T10:15:00Z", "2026-01-15T10:30:00Z"},
		{"03:00 in New York is 08:00 UTC in winter", structs.PeriodicConfig{Spec: "0 3 * * *", TimeZone: "America/New_York"}, "2026-01-15T00:00:00Z", "2026-01-15T08:00:00Z"},
		{"03:00 in New York is 07:00 UTC in summer", structs.PeriodicConfig{Spec: "0 3 * * *", TimeZone: "America/New_York"}, "2026-07-15T00:00:00Z", "2026-07-15T07:00:00Z"},
		{"the earliest of several specs wins", structs.PeriodicConfig{Specs: []string{"0 12 * * *", "30 10 * * *"}}, "2026-01-15T10:07:00Z", "2026-01-15T10:30:00Z"},
		{"spec and specs are both honoured", structs.PeriodicConfig{Spec: "0 12 * * *", Specs: []string{"0 11 * * *"}}, "2026-01-15T10:07:00Z", "2026-01-15T11:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustSchedule(t, &c.p).next(utc(c.from))
			if !got.Equal(utc(c.want)) {
				t.Fatalf("next after %s = %s, want %s", c.from, got.UTC(), c.want)
			}
		})
	}
}

func TestPeriodicScheduleLatestCollapsesMissedLaunchesIntoTheNewest(t *testing.T) {
	cases := []struct {
		name           string
		spec           string
		due, now, want string
	}{
		{"one launch due", "*/15 * * * *", "2026-01-15T10:15:00Z", "2026-01-15T10:15:00Z", "2026-01-15T10:15:00Z"},
		{"three missed, the newest runs", "*/15 * * * *", "2026-01-15T10:15:00Z", "2026-01-15T11:07:00Z", "2026-01-15T11:00:00Z"},
		{"a daily job missed for a week", "0 3 * * *", "2026-01-08T03:00:00Z", "2026-01-15T02:59:59Z", "2026-01-14T03:00:00Z"},
		// Walking every second of a month would take millions of steps.
		{"a per-second job missed for a month", "* * * * * * *", "2025-12-15T00:00:00Z", "2026-01-15T10:07:03Z", "2026-01-15T10:07:03Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustSchedule(t, &structs.PeriodicConfig{Spec: c.spec})
			got := s.latest(utc(c.due), utc(c.now))
			if !got.Equal(utc(c.want)) {
				t.Fatalf("latest(%s, %s) = %s, want %s", c.due, c.now, got.UTC(), c.want)
			}
		})
	}
}

func TestValidatePeriodicNamesTheProblem(t *testing.T) {
	periodic := func(mut func(j *structs.Job)) *structs.Job {
		j := periodicJob("report", "*/15 * * * *")
		mut(j)
		return j
	}
	cases := []struct {
		name string
		job  *structs.Job
		want string // "" means valid
	}{
		{"a valid batch job", periodic(func(*structs.Job) {}), ""},
		{"a job that is not periodic is not checked", periodic(func(j *structs.Job) { j.Periodic.Enabled = false; j.Periodic.Spec = "nope" }), ""},
		{"an unknown time zone", periodic(func(j *structs.Job) { j.Periodic.TimeZone = "Mars/Olympus_Mons" }), `time_zone "Mars/Olympus_Mons" is not a known IANA zone`},
		{"a malformed cron expression", periodic(func(j *structs.Job) { j.Periodic.Spec = "every tuesday" }), `cron expression "every tuesday"`},
		{"no cron expression", periodic(func(j *structs.Job) { j.Periodic.Spec = "" }), "a cron expression is required"},
		{"a spec type other than cron", periodic(func(j *structs.Job) { j.Periodic.SpecType = "rrule" }), `spec type "rrule" is not supported`},
		{"a service job", periodic(func(j *structs.Job) { j.Type = structs.JobTypeService }), "only batch and sysbatch jobs can be periodic"},
		{"periodic and parameterized", periodic(func(j *structs.Job) { j.ParameterizedJob = &structs.ParameterizedJobConfig{} }), "cannot be both periodic and parameterized"},
		{"seven fields, seconds first, are allowed", periodic(func(j *structs.Job) { j.Periodic.Spec = "0 */5 * * * * *" }), ""},
		{"a predefined schedule", periodic(func(j *structs.Job) { j.Periodic.Spec = "@hourly" }), ""},
		{"more fields than cron has would launch every second", periodic(func(j *structs.Job) { j.Periodic.Spec = "* * * * * * * 5" }),
			`cron expression "* * * * * * * 5" has 8 fields; at most 7 are allowed`},
		{"a newline joins two expressions", periodic(func(j *structs.Job) { j.Periodic.Spec = "0 3 * * *\n* * * * * * *" }),
			`cron expression "0 3 * * *\n* * * * * * *" contains a line break or control character`},
		{"an extra field in crons is refused too", periodic(func(j *structs.Job) { j.Periodic.Specs = []string{"0 3 * * * * * *"} }),
			`has 8 fields`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidatePeriodic(c.job)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestPeriodicLaunchTimeReadsTheChildID(t *testing.T) {
	launch := utc("2026-01-15T10:15:00Z")
	id := periodicChildID("report", launch)
	if id != "report/periodic-1768472100" {
		t.Fatalf("child ID %q", id)
	}
	got, err := LaunchTime(id)
	if err != nil || !got.Equal(launch) {
		t.Fatalf("LaunchTime(%q) = %s, %v", id, got, err)
	}
	for _, bad := range []string{"report", "report/periodic-", "report/periodic-soon"} {
		if _, err := LaunchTime(bad); err == nil {
			t.Fatalf("LaunchTime(%q) accepted a non-child ID", bad)
		}
	}
}

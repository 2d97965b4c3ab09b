package structs

import (
	"strings"
	"testing"
	"time"
)

func TestServiceCheckValidation(t *testing.T) {
	good := func() *ServiceCheck {
		return &ServiceCheck{Name: "alive", Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second}
	}
	cases := []struct {
		name   string
		change func(s *Service, c *ServiceCheck)
		want   string // "" for valid
	}{
		{"a complete http check is valid", func(s *Service, c *ServiceCheck) {}, ""},
		{"a tcp check needs no path", func(s *Service, c *ServiceCheck) { c.Type, c.Path = "tcp", "" }, ""},
		{"a script check names its task in a group service", func(s *Service, c *ServiceCheck) { c.Type, c.Command, c.TaskName = "script", "/bin/true", "server" }, ""},
		{"a missing type", func(s *Service, c *ServiceCheck) { c.Type = "" }, "check type is missing"},
		{"an unsupported type", func(s *Service, c *ServiceCheck) { c.Type = "grpc" }, `check type "grpc" is not supported`},
		{"an http check without path", func(s *Service, c *ServiceCheck) { c.Path = "" }, "http check needs a path"},
		{"a bad protocol", func(s *Service, c *ServiceCheck) { c.Protocol = "ftp" }, `protocol "ftp" must be http or https`},
		{"a bad method", func(s *Service, c *ServiceCheck) { c.Method = "FETCH" }, `method "FETCH" is not an HTTP method`},
		{"a script without command", func(s *Service, c *ServiceCheck) { c.Type, c.TaskName = "script", "server" }, "script check needs a command"},
		{"a group script check without a task", func(s *Service, c *ServiceCheck) { c.Type, c.Command = "script", "x" }, "must name the task it runs in"},
		{"a check naming an unknown task", func(s *Service, c *ServiceCheck) { c.TaskName = "nope" }, `task "nope" is not a task of the group`},
		{"a short interval", func(s *Service, c *ServiceCheck) { c.Interval = 100 * time.Millisecond }, "interval 100ms is below the minimum of 1s"},
		{"no timeout", func(s *Service, c *ServiceCheck) { c.Timeout = 0 }, "timeout 0s is below the minimum of 1s"},
		{"a bad initial status", func(s *Service, c *ServiceCheck) { c.InitialStatus = "ok" }, `initial_status "ok" must be`},
		{"a bad on_update", func(s *Service, c *ServiceCheck) { c.OnUpdate = "never" }, `on_update "never" must be`},
		{"a negative check_restart limit", func(s *Service, c *ServiceCheck) { c.CheckRestart = &CheckRestart{Limit: -1} }, "check[0] check_restart: limit must be >= 0"},
		{"a negative service check_restart grace", func(s *Service, c *ServiceCheck) { s.CheckRestart = &CheckRestart{Grace: -time.Second} }, `service[0] "web" check_restart: grace must be >= 0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := testJob()
			svc := &Service{Name: "web", PortLabel: "http", Checks: []*ServiceCheck{good()}}
			c.change(svc, svc.Checks[0])
			job.TaskGroups[0].Services = []*Service{svc}
			job.Canonicalize()
			err := job.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("want valid: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}

	t.Run("the number of checks is bounded", func(t *testing.T) {
		job := testJob()
		svc := &Service{Name: "web"}
		for range MaxChecksPerGroup + 1 {
			svc.Checks = append(svc.Checks, &ServiceCheck{Type: "tcp", Interval: time.Second, Timeout: time.Second})
		}
		job.TaskGroups[0].Services = []*Service{svc}
		job.Canonicalize()
		if err := job.Validate(); err == nil || !strings.Contains(err.Error(), "the group's services have 101 checks; at most 100 are allowed") {
			t.Fatalf("error %v", err)
		}
		svc.Checks = svc.Checks[:MaxChecksPerGroup]
		if err := job.Validate(); err != nil {
			t.Fatalf("%d checks must be allowed: %v", MaxChecksPerGroup, err)
		}
	})

	t.Run("a task service's check is validated too", func(t *testing.T) {
		job := testJob()
		bad := good()
		bad.Interval = 0
		job.TaskGroups[0].Tasks[0].Services = []*Service{{Name: "own", Checks: []*ServiceCheck{bad}}}
		job.Canonicalize()
		err := job.Validate()
		if err == nil || !strings.Contains(err.Error(), `task "server" service[0] "own" check[0]: interval 0s is below the minimum`) {
			t.Fatalf("error %v", err)
		}
	})
}

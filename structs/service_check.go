package structs

import (
	"net/http"
	"time"
)

// Service checks run on the client (client/checks); the limits below are
// what it can run, so a job that asks for more is refused when it is
// submitted rather than failing on every node.

// Check limits.
const (
	// MinCheckInterval and MinCheckTimeout are the shortest a check may
	// be run at and given, as in Nomad.
	MinCheckInterval = time.Second
	MinCheckTimeout  = time.Second
	// MaxChecksPerGroup bounds the checks of a group's services and its
	// tasks' services together: each is a goroutine and a probe a second
	// on every client that runs the group.
	MaxChecksPerGroup = 100
)

// validateServiceChecks checks the check blocks of the group's services
// and of its tasks' services.
func validateServiceChecks(tg *TaskGroup, p problems) {
	n := 0
	for _, s := range tg.Services {
		n += len(s.Checks)
	}
	for _, t := range tg.Tasks {
		for _, s := range t.Services {
			n += len(s.Checks)
		}
	}
	if n > MaxChecksPerGroup {
		p.add("the group's services have %d checks; at most %d are allowed", n, MaxChecksPerGroup)
	}
	for i, s := range tg.Services {
		sp := p.at("service[" + itoa(i) + "] " + quoteName(s.Name))
		validateCheckRestart(s.CheckRestart, sp.at("check_restart"))
		for j, c := range s.Checks {
			cp := sp.at("check[" + itoa(j) + "]")
			validateCheck(c, cp)
			task := c.TaskName
			if task == "" {
				task = s.TaskName
			}
			if c.Type == "script" && task == "" {
				cp.add(`a script check of a group service must name the task it runs in (task = "<name>")`)
			}
			if task != "" && tg.LookupTask(task) == nil {
				cp.add("task %q is not a task of the group", task)
			}
		}
	}
	for _, t := range tg.Tasks {
		for i, s := range t.Services {
			sp := p.at(`task "` + t.Name + `" service[` + itoa(i) + "] " + quoteName(s.Name))
			validateCheckRestart(s.CheckRestart, sp.at("check_restart"))
			for j, c := range s.Checks {
				validateCheck(c, sp.at("check["+itoa(j)+"]"))
			}
		}
	}
}

func quoteName(name string) string { return `"` + name + `"` }

func validateCheck(c *ServiceCheck, p problems) {
	switch c.Type {
	case "http":
		if c.Path == "" {
			p.add(`http check needs a path (e.g. path = "/health")`)
		}
		switch c.Protocol {
		case "", "http", "https":
		default:
			p.add("protocol %q must be http or https", c.Protocol)
		}
		if c.Method != "" && !validHTTPMethod(c.Method) {
			p.add("method %q is not an HTTP method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)", c.Method)
		}
	case "tcp":
	case "script":
		if c.Command == "" {
			p.add("script check needs a command")
		}
	case "":
		p.add("check type is missing (http, tcp or script)")
	default:
		p.add("check type %q is not supported: Drover runs http, tcp and script checks", c.Type)
	}
	if c.Interval < MinCheckInterval {
		p.add("interval %s is below the minimum of %s", c.Interval, MinCheckInterval)
	}
	if c.Timeout < MinCheckTimeout {
		p.add("timeout %s is below the minimum of %s", c.Timeout, MinCheckTimeout)
	}
	switch c.InitialStatus {
	case "", "passing", "warning", "critical":
	default:
		p.add("initial_status %q must be passing, warning or critical", c.InitialStatus)
	}
	switch c.OnUpdate {
	case "", "require_healthy", "ignore_warnings", "ignore":
	default:
		p.add("on_update %q must be require_healthy, ignore_warnings or ignore", c.OnUpdate)
	}
	validateCheckRestart(c.CheckRestart, p.at("check_restart"))
}

func validateCheckRestart(c *CheckRestart, p problems) {
	if c == nil {
		return
	}
	if c.Limit < 0 {
		p.add("limit must be >= 0 (0 restarts nothing), got %d", c.Limit)
	}
	if c.Grace < 0 {
		p.add("grace must be >= 0, got %s", c.Grace)
	}
}

func validHTTPMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

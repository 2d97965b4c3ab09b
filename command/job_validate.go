package command

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobValidateHelp = `
Usage: drover job validate [options] <path>

  Check a job file without submitting it: it is parsed here, then the
  agent checks it as it would on submission. If no agent can be reached
  (or it does not offer validation), the job is checked here by the same
  rules, and the output says so.
` + jobFileFlagsHelp

func jobValidate(m *Meta, args []string) int {
	c := m.cmdLine("job validate", jobValidateHelp, takes(1, "<path>"))
	var files jobFileFlags
	files.register(c.FlagSet)
	if code, ok := c.parse(args); !ok {
		return code
	}
	path := c.Arg(0)
	job, err := m.parseJobFile(path, &files)
	if err != nil {
		return m.errorf("Error parsing job file %s:\n%v", path, err)
	}
	m.useJobNamespace(job)
	client, code, ok := c.client()
	if !ok {
		return code
	}
	resp, _, err := client.Jobs().Validate(job, nil)
	switch {
	case err == nil:
	case api.HasStatusCode(err, http.StatusBadRequest):
		// Some agents answer an invalid job with 400 instead of a body
		// listing the errors.
		return m.errorf("Job validation errors:\n%s", serverMessage(err))
	case api.HasStatusCode(err, http.StatusNotFound), api.HasStatusCode(err, http.StatusNotImplemented), isConnectionError(err):
		if problems := localValidationErrors(job); len(problems) > 0 {
			return m.errorf("Job validation errors (checked locally only: %s):\n* %s", validateSkipReason(err), strings.Join(problems, "\n* "))
		}
		m.out("Job validation successful (checked locally only: %s)", validateSkipReason(err))
		return 0
	default:
		return m.errorf("Error validating job: %v", err)
	}
	if resp.Warnings != "" {
		m.out("Job Warnings:\n%s\n", strings.TrimSpace(resp.Warnings))
	}
	if len(resp.ValidationErrors) > 0 || resp.Error != "" {
		msg := resp.Error
		if len(resp.ValidationErrors) > 0 {
			msg = "* " + strings.Join(resp.ValidationErrors, "\n* ")
		}
		return m.errorf("Job validation errors:\n%s", msg)
	}
	m.out("Job validation successful")
	return 0
}

func validateSkipReason(err error) string {
	if isConnectionError(err) {
		return "the agent could not be reached"
	}
	return "the agent does not offer job validation"
}

// isConnectionError reports an error reaching the agent at all, as
// opposed to an answer from it.
func isConnectionError(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

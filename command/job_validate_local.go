package command

import (
	"encoding/json"
	"errors"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/httpapi"
	"github.com/drover-sched/drover/structs"
)

// localValidationErrors checks a parsed job the way an agent would on
// submission (structs' Validate, which this binary carries), for when no
// agent answers: the same rules and the same messages, so a job refused
// by the servers is not reported valid just because they were away. It
// works on a copy; job is left as parsed.
func localValidationErrors(job *api.Job) []string {
	raw, err := json.Marshal(job)
	if err != nil {
		return []string{err.Error()}
	}
	var c api.Job
	if err := json.Unmarshal(raw, &c); err != nil {
		return []string{err.Error()}
	}
	c.Canonicalize()
	sj := httpapi.ApiJobToStructJob(&c)
	sj.Canonicalize()
	err = sj.Validate()
	var ve *structs.ValidationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ve):
		return ve.Problems
	}
	return []string{err.Error()}
}

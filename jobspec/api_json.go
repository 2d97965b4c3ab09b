package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// apiForm says how a JSON job file in the API's shape is laid out.
type apiForm int

const (
	// apiWrapped is the register request body, {"Job": {...}}.
	apiWrapped apiForm = iota + 1
	// apiBare is the job object alone, as `job inspect` prints it.
	apiBare
)

// apiJSONForm tells the API's JSON apart from HCL's JSON syntax by the top
// level keys: HCL's has lower-case block names (job, variable, locals), the
// API's has PascalCase fields. Invalid JSON is left to the HCL JSON parser,
// whose errors carry positions.
func apiJSONForm(src []byte) (apiForm, bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		return 0, false
	}
	for _, hclKey := range []string{"job", "variable", "variables", "locals"} {
		if _, ok := top[hclKey]; ok {
			return 0, false
		}
	}
	if _, ok := top["Job"]; ok {
		return apiWrapped, true
	}
	for _, field := range []string{"ID", "Name", "TaskGroups"} {
		if _, ok := top[field]; ok {
			return apiBare, true
		}
	}
	return 0, false
}

// parseAPIJSON decodes the API's JSON straight into api.Job, exactly as the
// HTTP API decodes a register request: unknown fields are ignored, so the
// output of Nomad's `job inspect` decodes even where it has fields Drover
// does not model.
func parseAPIJSON(filename string, src []byte, form apiForm) (*api.Job, error) {
	var job *api.Job
	var err error
	switch form {
	case apiWrapped:
		var req struct{ Job *api.Job }
		err = json.Unmarshal(src, &req)
		job = req.Job
	default:
		job = new(api.Job)
		err = json.Unmarshal(src, job)
	}
	if err != nil {
		return nil, &Error{Diagnostics: hcl.Diagnostics{jsonDiag(filename, src, err)}}
	}
	if job == nil {
		return nil, &Error{Diagnostics: hcl.Diagnostics{newDiag(startOf(filename), "Missing job",
			`The "Job" field is null; it must hold the job object.`)}}
	}
	return job, nil
}

// jsonDiag turns an encoding/json error into a diagnostic pointing at the
// offending byte, so that API JSON errors read like HCL ones.
func jsonDiag(filename string, src []byte, err error) *hcl.Diagnostic {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return newDiag(rangeAt(filename, src, typeErr.Offset), "Invalid job JSON",
			"The field %s cannot hold a JSON %s; it needs a %s.", typeErr.Field, typeErr.Value, typeErr.Type)
	case errors.As(err, &syntaxErr):
		return newDiag(rangeAt(filename, src, syntaxErr.Offset), "Invalid job JSON", "%s.", syntaxErr)
	default:
		return newDiag(startOf(filename), "Invalid job JSON", "%s.", err)
	}
}

// rangeAt returns the position of byte offset off in src.
func rangeAt(filename string, src []byte, off int64) hcl.Range {
	off = min(max(off, 0), int64(len(src)))
	before := src[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	pos := hcl.Pos{Line: line, Column: col, Byte: int(off)}
	return hcl.Range{Filename: filename, Start: pos, End: pos}
}

func startOf(filename string) hcl.Range {
	return hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}
}

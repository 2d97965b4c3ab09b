package structs

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A parameterized job's `payload` setting: whether a dispatch must, may or
// must not carry a payload. An unset payload is "optional", as in Nomad.
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

// DispatchPayloadSizeLimit is the largest payload a dispatch may carry:
// 16 KiB, Nomad's limit. The payload travels inside the child job through
// raft and to the client, so it is kept small.
const DispatchPayloadSizeLimit = 16 * 1024

// DispatchLaunchSuffix separates a parameterized parent's ID from the rest
// of a dispatched child's ID, as in Nomad.
const DispatchLaunchSuffix = "/dispatch-"

// DispatchedID names a dispatched child of parentID the way Nomad does:
// <parent>/dispatch-<unix seconds>-<suffix>, or with an ID prefix template
// <parent>/dispatch-<template>-<unix seconds>-<suffix>. The caller chooses
// the time and the random suffix (8 hex characters), so that the leader
// names the child before the raft entry and no FSM apply ever does.
func DispatchedID(parentID, idPrefixTemplate string, at time.Time, suffix string) string {
	var b strings.Builder
	b.WriteString(parentID)
	b.WriteString(DispatchLaunchSuffix)
	if idPrefixTemplate != "" {
		b.WriteString(idPrefixTemplate)
		b.WriteByte('-')
	}
	b.WriteString(strconv.FormatInt(at.Unix(), 10))
	b.WriteByte('-')
	b.WriteString(suffix)
	return b.String()
}

// IsDispatchedChildOf reports whether j is a child dispatched from the
// parameterized job parentID.
func (j *Job) IsDispatchedChildOf(parentID string) bool {
	return j.Dispatched && j.ParentID == parentID && strings.HasPrefix(j.ID, parentID+DispatchLaunchSuffix)
}

// canonicalize fills the payload default.
func (p *ParameterizedJobConfig) canonicalize() {
	if p.Payload == "" {
		p.Payload = DispatchPayloadOptional
	}
}

// validateParameterized checks a parameterized job's block and its tasks'
// dispatch_payload blocks, as Nomad does at registration: a known payload
// setting, meta keys that are not both required and optional, a batch or
// sysbatch type (a dispatch runs to completion), and payload files that
// stay inside the task's local directory.
func validateParameterized(j *Job, p problems) {
	for _, tg := range j.TaskGroups {
		for _, t := range tg.Tasks {
			if t.DispatchPayload != nil {
				validatePayloadFile(t.DispatchPayload.File, p.at(`group "`+tg.Name+`" task "`+t.Name+`" dispatch_payload`))
			}
		}
	}
	pj := j.ParameterizedJob
	if pj == nil || j.Dispatched {
		return
	}
	p = p.at("parameterized")
	switch pj.Payload {
	case "", DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden:
	default:
		p.add("payload %q is not one of %q, %q, %q", pj.Payload, DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden)
	}
	required := map[string]bool{}
	for _, k := range pj.MetaRequired {
		if k == "" {
			p.add("meta_required has an empty key")
		}
		required[k] = true
	}
	for _, k := range pj.MetaOptional {
		if k == "" {
			p.add("meta_optional has an empty key")
		}
		if required[k] {
			p.add("meta key %q is both in meta_required and meta_optional; list it in one", k)
		}
	}
	if j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		p.add("a parameterized job must be of type %q or %q, not %q", JobTypeBatch, JobTypeSysBatch, j.Type)
	}
}

// validatePayloadFile checks that a dispatch payload file is a relative
// path that stays inside the task's local directory. An empty one is
// allowed, as by Nomad: the payload is then not written.
func validatePayloadFile(file string, p problems) {
	switch {
	case file == "":
	case filepath.IsAbs(file) || strings.HasPrefix(file, "/"):
		p.add("file %q must be relative to the task's local directory, not absolute", file)
	case strings.HasPrefix(path.Clean(filepath.ToSlash(file)), "../") || path.Clean(filepath.ToSlash(file)) == "..":
		p.add("file %q escapes the task's local directory", file)
	case path.Clean(filepath.ToSlash(file)) == ".":
		p.add("file %q names the local directory itself, not a file in it", file)
	}
}

// ValidateDispatch checks a dispatch request against a parameterized
// parent: the payload against the parent's payload setting and the 16 KiB
// limit, the meta keys against meta_required and meta_optional, and
// Nomad's optional extras (a priority in range, an ID prefix template that
// keeps the child's ID valid). Every problem is reported, naming the keys
// at fault and the ones that are allowed.
func ValidateDispatch(parent *Job, req *JobDispatchRequest) error {
	p := newProblems()
	pj := parent.ParameterizedJob
	if pj == nil {
		p.add("job %q is not parameterized", parent.ID)
		return p.err()
	}
	setting := pj.Payload
	if setting == "" {
		setting = DispatchPayloadOptional
	}
	switch n := len(req.Payload); {
	case setting == DispatchPayloadRequired && n == 0:
		p.add("payload is missing: job %q requires one (parameterized payload = %q)", parent.ID, setting)
	case setting == DispatchPayloadForbidden && n > 0:
		p.add("payload of %d bytes is not allowed: job %q forbids one (parameterized payload = %q)", n, parent.ID, setting)
	case n > DispatchPayloadSizeLimit:
		p.add("payload is %d bytes, more than the limit of %d bytes (16 KiB)", n, DispatchPayloadSizeLimit)
	}

	allowed := map[string]bool{}
	for _, k := range pj.MetaRequired {
		allowed[k] = true
	}
	for _, k := range pj.MetaOptional {
		allowed[k] = true
	}
	var unpermitted, missing []string
	for _, k := range slices.Sorted(maps.Keys(req.Meta)) {
		if !allowed[k] {
			unpermitted = append(unpermitted, k)
		}
	}
	for _, k := range sortedCopy(pj.MetaRequired) {
		if _, ok := req.Meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(unpermitted) > 0 {
		p.add("meta keys %s are not allowed by job %q; allowed keys: %s", quoteList(unpermitted), parent.ID, allowedMeta(pj))
	}
	if len(missing) > 0 {
		p.add("required meta keys %s are missing (job %q has meta_required = %s)", quoteList(missing), parent.ID, quoteList(sortedCopy(pj.MetaRequired)))
	}

	if req.Priority != 0 && (req.Priority < JobMinPriority || req.Priority > JobMaxPriority) {
		p.add("priority %d must be between %d and %d (or 0 for the parent's priority)", req.Priority, JobMinPriority, JobMaxPriority)
	}
	if t := req.IdPrefixTemplate; t != "" {
		validateIDChars(p, "ID prefix template", t)
	}
	return p.err()
}

// allowedMeta describes the keys a dispatch may set.
func allowedMeta(pj *ParameterizedJobConfig) string {
	if len(pj.MetaRequired) == 0 && len(pj.MetaOptional) == 0 {
		return "none (the job has neither meta_required nor meta_optional)"
	}
	return fmt.Sprintf("meta_required = %s, meta_optional = %s", quoteList(sortedCopy(pj.MetaRequired)), quoteList(sortedCopy(pj.MetaOptional)))
}

func sortedCopy(s []string) []string {
	out := copyStrings(s)
	sort.Strings(out)
	return out
}

// quoteList renders keys as ["a", "b"].
func quoteList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

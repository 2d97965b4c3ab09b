package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/jobspec"
)

// A job submitted with Nomad's client may use Nomad features Drover's job
// type does not have (vault, consul, identity, a task's scaling policies,
// csi_plugin, multiregion, ...). JSON decoding drops them silently, as Nomad drops
// unknown fields; so that a user is not surprised by a task running
// without its Vault token, the register, plan and validate endpoints name
// every dropped field that carried a value in their Warnings, which
// Nomad's CLI prints.

// decodeJobBody decodes a request body holding a "Job" into out and
// returns the paths of the job's fields that Drover ignores.
func decodeJobBody(r *http.Request, out any) ([]string, error) {
	if r.Body == nil {
		return nil, decodeBody(r, out)
	}
	// The body is already bounded (limitBody, jobBodyLimit).
	raw, err := io.ReadAll(r.Body)
	var coded *codedError
	switch {
	case errors.As(err, &coded):
		return nil, coded
	case err != nil:
		return nil, badRequest("reading the request body: %v", err)
	}
	if msg := jobspec.NestingError(raw, jobspec.MaxNestingDepth); msg != "" {
		return nil, badRequest("%s", msg)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err := decodeBody(r, out); err != nil {
		return nil, err
	}
	var env struct{ Job json.RawMessage }
	if json.Unmarshal(raw, &env) != nil || len(env.Job) == 0 {
		return nil, nil
	}
	job, ok := decodeJobJSON(env.Job)
	if !ok {
		return nil, nil
	}
	if p := nullElement(job, reflect.TypeOf(api.Job{}), "Job"); p != "" {
		return nil, badRequest("%s is null: a job's lists and maps of objects hold objects; remove the null", p)
	}
	return ignoredJobFields(job), nil
}

// decodeJobJSON decodes a job's JSON generically, numbers kept as written.
func decodeJobJSON(raw json.RawMessage) (any, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// ignoredJobFields lists, as paths such as Job.TaskGroups[web].Tasks[app].Vault,
// the fields of a job decoded from JSON (decodeJobJSON) that api.Job has
// no place for. Null, false, zero and empty values are not listed: Nomad's
// client sends every field it knows, most of them null.
func ignoredJobFields(v any) []string {
	var out []string
	walkIgnored(v, reflect.TypeOf(api.Job{}), "Job", &out)
	return out
}

// ignoredWarning formats ignored fields for a Warnings string.
func ignoredWarning(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return "Drover does not support these job fields and ignored them:\n  * " + strings.Join(fields, "\n  * ")
}

// joinWarnings joins non-empty warnings, one per line.
func joinWarnings(ws ...string) string {
	var out []string
	for _, w := range ws {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, "\n")
}

func walkIgnored(v any, t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFieldTypes(t)
		for _, k := range sortedKeys(obj) {
			ft, ok := fields[strings.ToLower(k)]
			if !ok {
				if !emptyJSON(obj[k]) {
					*out = append(*out, path+"."+k)
				}
				continue
			}
			walkIgnored(obj[k], ft, path+"."+k, out)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			walkIgnored(e, t.Elem(), path+"["+elemLabel(e, i)+"]", out)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(obj) {
			walkIgnored(obj[k], t.Elem(), path+"["+k+"]", out)
		}
	}
}

// jsonFieldTypes maps the lower-cased JSON names of a struct's fields
// (embedded structs' included) to their types; encoding/json matches
// names case-insensitively too.
func jsonFieldTypes(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFieldTypes(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[strings.ToLower(name)] = f.Type
	}
	return out
}

// elemLabel names a list element by its Name (groups, tasks, services)
// or else its position.
func elemLabel(e any, i int) string {
	if obj, ok := e.(map[string]any); ok {
		if name, ok := obj["Name"].(string); ok && name != "" {
			return name
		}
	}
	return strconv.Itoa(i)
}

// emptyJSON reports a value that carries nothing: null, false, 0, "",
// or an array or object of such values.
func emptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		for _, e := range x {
			if !emptyJSON(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !emptyJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

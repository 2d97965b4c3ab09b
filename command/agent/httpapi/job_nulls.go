package httpapi

import (
	"reflect"
	"strings"
)

// nullElement returns the path of the first null in v, a job decoded from
// JSON, that stands where api.Job's type t holds a list or map of
// pointers (Job.TaskGroups[0], Job.TaskGroups[web].Volumes[data]), or ""
// if there is none. Such a null decodes to a nil element, which nothing
// after decoding (canonicalizing, converting, validating, scheduling)
// expects: a body with one is refused as a whole. A null elsewhere (an
// unset field, a value in a driver config or in meta) is left alone.
func nullElement(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		fields := jsonFieldTypes(t)
		for _, k := range sortedKeys(obj) {
			if ft, ok := fields[strings.ToLower(k)]; ok {
				if p := nullElement(obj[k], ft, path+"."+k); p != "" {
					return p
				}
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return ""
		}
		for i, e := range arr {
			p := path + "[" + elemLabel(e, i) + "]"
			if e == nil && t.Elem().Kind() == reflect.Pointer {
				return p
			}
			if p := nullElement(e, t.Elem(), p); p != "" {
				return p
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		for _, k := range sortedKeys(obj) {
			p := path + "[" + k + "]"
			if obj[k] == nil && t.Elem().Kind() == reflect.Pointer {
				return p
			}
			if p := nullElement(obj[k], t.Elem(), p); p != "" {
				return p
			}
		}
	}
	return ""
}

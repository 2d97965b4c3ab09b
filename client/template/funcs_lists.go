package template

import (
	"fmt"
	"iter"
	"reflect"
	"sort"
	"strings"
)

// in reports whether v is an element of the list l, or a substring of
// the string l. Numbers compare by value across sizes (an int64 from
// parseInt finds an int literal); strings compare only with strings.
func in(l, v any) (bool, error) {
	lv := reflect.ValueOf(l)
	vv := reflect.ValueOf(v)
	switch lv.Kind() {
	case reflect.Array, reflect.Slice:
		for i := 0; i < lv.Len(); i++ {
			if sameValue(lv.Index(i), vv) {
				return true, nil
			}
		}
	case reflect.String:
		if vv.IsValid() && vv.Kind() == reflect.String && vv.Type() == lv.Type() {
			return strings.Contains(lv.String(), vv.String()), nil
		}
	}
	return false, nil
}

// sameValue compares a list element with a value the way consul-template's
// `in` does: integers with integers, floats with floats, strings of the
// same type; anything else never matches.
func sameValue(e, v reflect.Value) bool {
	for e.Kind() == reflect.Interface && !e.IsNil() {
		e = e.Elem()
	}
	if !e.IsValid() || !v.IsValid() {
		return false
	}
	switch {
	case isInt(e.Kind()) && isInt(v.Kind()):
		return e.Int() == v.Int()
	case isFloat(e.Kind()) && isFloat(v.Kind()):
		return e.Float() == v.Float()
	case e.Kind() == reflect.String && v.Kind() == reflect.String:
		return e.Type() == v.Type() && e.String() == v.String()
	}
	return false
}

// contains is `in` with its arguments swapped, for pipes:
// {{ .Tags | contains "web" }}.
func contains(v, l any) (bool, error) { return in(l, v) }

// containsAll: every element of vs is in l.
func containsAll(vs, l any) (bool, error) { return containsSome(vs, l, true, true) }

// containsAny: some element of vs is in l.
func containsAny(vs, l any) (bool, error) { return containsSome(vs, l, false, false) }

// containsNone: no element of vs is in l.
func containsNone(vs, l any) (bool, error) { return containsSome(vs, l, true, false) }

// containsNotAll: some element of vs is not in l.
func containsNotAll(vs, l any) (bool, error) { return containsSome(vs, l, false, true) }

// containsSome walks vs and stops at the first element whose membership
// in l is !invert, answering !whenDone; otherwise it answers whenDone.
func containsSome(vs, l any, whenDone, invert bool) (bool, error) {
	v := reflect.ValueOf(vs)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return false, fmt.Errorf("want a list of values to look for, got %T", vs)
	}
	for i := 0; i < v.Len(); i++ {
		if ok, _ := in(l, v.Index(i).Interface()); ok != invert {
			return !whenDone, nil
		}
	}
	return whenDone, nil
}

// explodeMap turns a flat map with slash-separated keys into nested maps:
// {"a/b": 1} becomes {"a": {"b": 1}}.
func explodeMap(in map[string]any) (map[string]any, error) {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]any{}
	for _, k := range keys {
		if err := explodeInto(out, k, in[k], k); err != nil {
			return nil, fmt.Errorf("explodeMap: %w", err)
		}
	}
	return out, nil
}

func explodeInto(m map[string]any, key string, v any, full string) error {
	top, rest, nested := strings.Cut(key, "/")
	if !nested {
		if key != "" {
			m[key] = v
		}
		return nil
	}
	if _, ok := m[top]; !ok {
		m[top] = map[string]any{}
	}
	sub, ok := m[top].(map[string]any)
	if !ok {
		return fmt.Errorf("not a map: %q: %q already has value %v", full, top, m[top])
	}
	return explodeInto(sub, rest, v, key)
}

// loop yields start..stop-1: {{ range loop 3 }} gives 0 1 2 and
// {{ range loop 5 8 }} gives 5 6 7. Bounds may be integers or integer
// strings. It yields lazily, so a large bound costs no memory.
func loop(bounds ...any) (iter.Seq[int64], error) {
	var start, stop int64
	var err error
	switch len(bounds) {
	case 1:
		stop, err = loopBound(bounds[0])
	case 2:
		if start, err = loopBound(bounds[0]); err == nil {
			stop, err = loopBound(bounds[1])
		}
	default:
		return nil, fmt.Errorf("loop: wrong number of arguments, expected 1 or 2, but got %d", len(bounds))
	}
	if err != nil {
		return nil, err
	}
	return func(yield func(int64) bool) {
		for i := start; i < stop; i++ {
			if !yield(i) {
				return
			}
		}
	}, nil
}

func loopBound(b any) (int64, error) {
	v := reflect.ValueOf(b)
	switch {
	case isInt(v.Kind()):
		return v.Int(), nil
	case isUint(v.Kind()):
		return int64(v.Uint()), nil
	case v.Kind() == reflect.String:
		return parseInt(v.String())
	}
	return 0, fmt.Errorf("loop: bad argument type: %T", b)
}

func isInt(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Int64
}

func isUint(k reflect.Kind) bool {
	return k >= reflect.Uint && k <= reflect.Uintptr
}

func isFloat(k reflect.Kind) bool {
	return k == reflect.Float32 || k == reflect.Float64
}

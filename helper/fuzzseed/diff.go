package fuzzseed

import (
	"fmt"
	"reflect"
	"sort"
	"time"
)

// Diff names the first place where a and b differ, as a path such as
// ".Evals[0].WaitUntil", with both values there; "" if they are equal.
// Nil and empty slices and maps count as equal, as structs.DeepEqual has
// them, because msgpack does not tell them apart, and times are equal when
// they are the same instant in the same zone (see sameTime). Fuzz targets
// use it to check and say what a round trip changed, which a printout of
// two large requests does not.
func Diff(a, b any) string {
	return diff(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

func diff(a, b reflect.Value, path string) string {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return fmt.Sprintf("%s: %s vs %s", root(path), show(a), show(b))
		}
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: a %s vs a %s", root(path), a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: %s vs %s", root(path), show(a), show(b))
			}
			return ""
		}
		return diff(a.Elem(), b.Elem(), path)
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d elements vs %d", root(path), a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries vs %d", root(path), a.Len(), b.Len())
		}
		keys := a.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			p := fmt.Sprintf("%s[%q]", path, fmt.Sprint(k))
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s: missing from the second", p)
			}
			if d := diff(a.MapIndex(k), bv, p); d != "" {
				return d
			}
		}
		return ""
	case reflect.Struct:
		if shape := decodedShape(a.Type()); shape != nil && a.CanInterface() {
			return diffAsShape(a, b, shape, path)
		}
		// A struct behind an unexported field (a type's own state)
		// cannot be read as a time, and is not one.
		if a.Type() == timeType && a.CanInterface() {
			ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
			if !sameTime(ta, tb) {
				return fmt.Sprintf("%s: %s vs %s", root(path), ta, tb)
			}
			return ""
		}
		for i := range a.NumField() {
			if d := diff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	}
	if !equalScalar(a, b) {
		return fmt.Sprintf("%s: %s vs %s", root(path), show(a), show(b))
	}
	return ""
}

// diffAsShape compares two values of a type that is encoded as another
// (see decodedShape) as values of that shape: their unexported fields
// say how they are kept, not what they hold.
func diffAsShape(a, b reflect.Value, shape reflect.Type, path string) string {
	as, bs := reflect.New(shape), reflect.New(shape)
	for _, c := range []struct{ v, into reflect.Value }{{a, as}, {b, bs}} {
		if err := convertShape(c.v.Interface(), c.into.Interface()); err != nil {
			return fmt.Sprintf("%s: %s does not read as a %s: %v", root(path), show(c.v), shape, err)
		}
	}
	return diff(as.Elem(), bs.Elem(), path)
}

// sameTime reports whether a and b are the same instant shown the same way
// (zone name and offset). Their internal bits may differ: time.Time's
// UnmarshalBinary keeps a nanosecond field of 10^9 or more as it finds it,
// and every later encoding normalises it, so a time from a foreign encoder
// changes representation, not meaning, on its first trip.
func sameTime(a, b time.Time) bool {
	an, ao := a.Zone()
	bn, bo := b.Zone()
	return a.Equal(b) && an == bn && ao == bo && a.Location().String() == b.Location().String()
}

func equalScalar(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		// By identity, which an unexported field (a type's own state,
		// such as a channel it closes) can be read for too.
		return a.Pointer() == b.Pointer()
	}
	return a.CanInterface() && b.CanInterface() && reflect.DeepEqual(a.Interface(), b.Interface())
}

func show(v reflect.Value) string {
	switch {
	case !v.IsValid():
		return "nothing"
	case (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil():
		return "nil"
	case v.CanInterface():
		return fmt.Sprintf("%#v", v.Interface())
	}
	return v.String()
}

func root(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}

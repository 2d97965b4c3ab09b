package fuzzseed

import "reflect"

// Scribble overwrites everything reachable from v through pointers, slices
// and maps: slice elements and fields are zeroed and every map gains an
// entry. A target that scribbles over a copy and then finds the original
// changed has found a copy that shares memory with its source, the kind of
// aliasing that becomes a data race once the two are used concurrently.
func Scribble(v any) {
	scribble(reflect.ValueOf(v), 0)
}

func scribble(v reflect.Value, depth int) {
	if depth > maxValueDepth*4 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scribble(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				scribble(f, depth+1)
				f.Set(reflect.Zero(f.Type()))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			scribble(e, depth+1)
			e.Set(reflect.Zero(e.Type()))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			scribble(v.MapIndex(k), depth+1)
		}
		if v.Type().Key().Kind() == reflect.String {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString("fuzzseed: scribbled")
			v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
		}
	}
}

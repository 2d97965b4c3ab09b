package structs

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// jobDiffSkip lists fields the servers maintain, which a user never edits and
// a plan diff must not show.
var jobDiffSkip = map[string]bool{
	"Status": true, "StatusDescription": true, "Stable": true, "Version": true, "SubmitTime": true,
	"CreateIndex": true, "ModifyIndex": true, "JobModifyIndex": true, "TaskGroups": true, "Tasks": true,
	"Payload": true,
}

// Diff returns the structured difference from j (the running version, nil
// when the job is new) to other (the proposed version), in the shape
// `job plan` prints. With contextual, unchanged fields are included too.
func (j *Job) Diff(other *Job, contextual bool) (*JobDiff, error) {
	if j == nil && other == nil {
		return nil, fmt.Errorf("nothing to diff")
	}
	if j != nil && other != nil && j.ID != other.ID {
		return nil, fmt.Errorf("cannot diff jobs with different IDs %q and %q", j.ID, other.ID)
	}
	d := &JobDiff{ID: either(j, other).ID}
	d.Type, d.Fields, d.Objects = diffSides(j, other, contextual)
	d.TaskGroups = diffChildren(j, other, func(j *Job) []*TaskGroup { return j.TaskGroups }, groupName, contextual, diffTaskGroup)
	if d.Type == DiffTypeNone && slices.ContainsFunc(d.TaskGroups, func(tg *TaskGroupDiff) bool { return tg.Type != DiffTypeNone }) {
		d.Type = DiffTypeEdited
	}
	return d, nil
}

// either returns old, or new when old is nil: the side a diff takes its
// name from.
func either[T any](old, new *T) *T {
	if old == nil {
		return new
	}
	return old
}

// diffSides compares two versions of a job, group or task, either of
// which may be nil (absent): it is added, deleted, or edited when one of
// its own fields or objects is.
func diffSides[T any](old, new *T, contextual bool) (string, []*FieldDiff, []*ObjectDiff) {
	typ := DiffTypeNone
	var oldV, newV reflect.Value
	if old == nil {
		typ = DiffTypeAdded
	} else {
		oldV = reflect.ValueOf(old).Elem()
	}
	if new == nil {
		typ = DiffTypeDeleted
	} else {
		newV = reflect.ValueOf(new).Elem()
	}
	fields, objects := diffStruct(oldV, newV, contextual)
	if typ == DiffTypeNone && (anyEdited(fields) || anyObjEdited(objects)) {
		typ = DiffTypeEdited
	}
	return typ, fields, objects
}

// diffChildren diffs the groups or tasks of two versions of their
// parent (either may be nil), matched by name, in name order.
func diffChildren[P, C, D any](old, new *P, children func(*P) []*C, name func(*C) string, contextual bool, diff func(old, new *C, contextual bool) D) []D {
	var oc, nc []*C
	if old != nil {
		oc = children(old)
	}
	if new != nil {
		nc = children(new)
	}
	var out []D
	for _, n := range unionNames(names(oc, name), names(nc, name)) {
		out = append(out, diff(findNamed(oc, n, name), findNamed(nc, n, name), contextual))
	}
	return out
}

func diffTaskGroup(old, new *TaskGroup, contextual bool) *TaskGroupDiff {
	d := &TaskGroupDiff{Name: either(old, new).Name}
	d.Type, d.Fields, d.Objects = diffSides(old, new, contextual)
	d.Tasks = diffChildren(old, new, func(tg *TaskGroup) []*Task { return tg.Tasks }, taskName, contextual, diffTask)
	if d.Type == DiffTypeNone && slices.ContainsFunc(d.Tasks, func(t *TaskDiff) bool { return t.Type != DiffTypeNone }) {
		d.Type = DiffTypeEdited
	}
	return d
}

func diffTask(old, new *Task, contextual bool) *TaskDiff {
	d := &TaskDiff{Name: either(old, new).Name}
	d.Type, d.Fields, d.Objects = diffSides(old, new, contextual)
	return d
}

// diffStruct compares two struct values (either may be invalid, meaning
// absent): scalar fields become FieldDiffs, nested structs, maps and slices
// become ObjectDiffs.
func diffStruct(old, new reflect.Value, contextual bool) ([]*FieldDiff, []*ObjectDiff) {
	var fields []*FieldDiff
	var objects []*ObjectDiff
	var typ reflect.Type
	if old.IsValid() {
		typ = old.Type()
	} else {
		typ = new.Type()
	}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() || jobDiffSkip[f.Name] || f.Tag.Get("json") == "-" {
			continue
		}
		var ov, nv reflect.Value
		if old.IsValid() {
			ov = old.Field(i)
		}
		if new.IsValid() {
			nv = new.Field(i)
		}
		if isScalar(f.Type) {
			if fd := diffField(f.Name, ov, nv, contextual); fd != nil {
				fields = append(fields, fd)
			}
			continue
		}
		objects = append(objects, diffObjects(f.Name, ov, nv, contextual)...)
	}
	sort.Slice(fields, func(a, b int) bool { return fields[a].Name < fields[b].Name })
	return fields, objects
}

func isScalar(t reflect.Type) bool {
	if t == reflect.TypeOf(time.Duration(0)) {
		return true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

func scalarString(v reflect.Value) (string, bool) {
	for v.IsValid() && v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return "", false
	}
	if d, ok := v.Interface().(time.Duration); ok {
		return d.String(), true
	}
	return fmt.Sprint(v.Interface()), true
}

func diffField(name string, old, new reflect.Value, contextual bool) *FieldDiff {
	os, oldOK := scalarString(old)
	ns, newOK := scalarString(new)
	if oldOK && old.IsZero() && !new.IsValid() {
		oldOK = false
	}
	if newOK && new.IsZero() && !old.IsValid() {
		newOK = false
	}
	switch {
	case !oldOK && !newOK:
		return nil
	case !oldOK:
		return &FieldDiff{Type: DiffTypeAdded, Name: name, New: ns}
	case !newOK:
		return &FieldDiff{Type: DiffTypeDeleted, Name: name, Old: os}
	case os != ns:
		return &FieldDiff{Type: DiffTypeEdited, Name: name, Old: os, New: ns}
	case contextual:
		return &FieldDiff{Type: DiffTypeNone, Name: name, Old: os, New: ns}
	}
	return nil
}

// diffObjects handles a non-scalar field: a struct (one object), a map
// (one object of key fields), or a slice (one object per element, by
// position; elements that are equal are omitted).
func diffObjects(name string, old, new reflect.Value, contextual bool) []*ObjectDiff {
	deref := func(v reflect.Value) reflect.Value {
		for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
		return v
	}
	old, new = deref(old), deref(new)
	if !old.IsValid() && !new.IsValid() {
		return nil
	}
	kind := old.Kind()
	if !old.IsValid() {
		kind = new.Kind()
	}
	switch kind {
	case reflect.Struct:
		if t := old; t.IsValid() && t.Type() == reflect.TypeOf(time.Time{}) {
			return nil
		}
		fields, objects := diffStruct(old, new, contextual)
		return wrapObject(name, old.IsValid(), new.IsValid(), fields, objects, contextual)
	case reflect.Map:
		fields := diffMap(old, new, contextual)
		if (!old.IsValid() || old.Len() == 0) && (!new.IsValid() || new.Len() == 0) {
			return nil
		}
		return wrapObject(name, old.IsValid() && old.Len() > 0, new.IsValid() && new.Len() > 0, fields, nil, contextual)
	case reflect.Slice:
		n := 0
		if old.IsValid() {
			n = old.Len()
		}
		if new.IsValid() && new.Len() > n {
			n = new.Len()
		}
		var out []*ObjectDiff
		for i := 0; i < n; i++ {
			var ov, nv reflect.Value
			if old.IsValid() && i < old.Len() {
				ov = old.Index(i)
			}
			if new.IsValid() && i < new.Len() {
				nv = new.Index(i)
			}
			if isScalar(elemType(old, new)) {
				fd := diffField(name, ov, nv, contextual)
				if fd != nil {
					out = append(out, &ObjectDiff{Type: fd.Type, Name: name, Fields: []*FieldDiff{fd}})
				}
				continue
			}
			out = append(out, diffObjects(name, ov, nv, contextual)...)
		}
		return out
	}
	return nil
}

func elemType(a, b reflect.Value) reflect.Type {
	if a.IsValid() {
		return a.Type().Elem()
	}
	return b.Type().Elem()
}

func diffMap(old, new reflect.Value, contextual bool) []*FieldDiff {
	keys := map[string]bool{}
	for _, m := range []reflect.Value{old, new} {
		if m.IsValid() {
			for _, k := range m.MapKeys() {
				keys[fmt.Sprint(k.Interface())] = true
			}
		}
	}
	var out []*FieldDiff
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		var ov, nv reflect.Value
		if old.IsValid() {
			ov = old.MapIndex(reflect.ValueOf(k).Convert(old.Type().Key()))
		}
		if new.IsValid() {
			nv = new.MapIndex(reflect.ValueOf(k).Convert(new.Type().Key()))
		}
		os, oldOK := anyString(ov)
		ns, newOK := anyString(nv)
		switch {
		case !oldOK:
			out = append(out, &FieldDiff{Type: DiffTypeAdded, Name: k, New: ns})
		case !newOK:
			out = append(out, &FieldDiff{Type: DiffTypeDeleted, Name: k, Old: os})
		case os != ns:
			out = append(out, &FieldDiff{Type: DiffTypeEdited, Name: k, Old: os, New: ns})
		case contextual:
			out = append(out, &FieldDiff{Type: DiffTypeNone, Name: k, Old: os, New: ns})
		}
	}
	return out
}

func anyString(v reflect.Value) (string, bool) {
	if !v.IsValid() {
		return "", false
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", true
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Map {
		return strings.TrimSpace(fmt.Sprintf("%v", v.Interface())), true
	}
	if v.Kind() == reflect.Struct {
		return structString(v), true
	}
	return fmt.Sprint(v.Interface()), true
}

// structString prints a struct as %v does, except that pointers are
// followed: %v prints a nested pointer as its address, which differs
// between two equal values (a map of volumes whose requests have mount
// options would always diff as edited).
func structString(v reflect.Value) string {
	var b strings.Builder
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				b.WriteString("<nil>")
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			b.WriteString("{")
			for i := 0; i < v.NumField(); i++ {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(v.Field(i))
			}
			b.WriteString("}")
		case reflect.Slice, reflect.Array:
			b.WriteString("[")
			for i := 0; i < v.Len(); i++ {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(v.Index(i))
			}
			b.WriteString("]")
		default:
			if v.CanInterface() {
				fmt.Fprint(&b, v.Interface())
			} else {
				fmt.Fprint(&b, v)
			}
		}
	}
	walk(v)
	return b.String()
}

func wrapObject(name string, hadOld, hasNew bool, fields []*FieldDiff, objects []*ObjectDiff, contextual bool) []*ObjectDiff {
	if len(fields) == 0 && len(objects) == 0 && hadOld != hasNew {
		// An empty block added or removed (a batch job's zero update
		// strategy) has nothing to show.
		return nil
	}
	o := &ObjectDiff{Name: name, Fields: fields, Objects: objects}
	switch {
	case !hadOld && hasNew:
		o.Type = DiffTypeAdded
	case hadOld && !hasNew:
		o.Type = DiffTypeDeleted
	case anyEdited(fields) || anyObjEdited(objects):
		o.Type = DiffTypeEdited
	default:
		if !contextual {
			return nil
		}
		o.Type = DiffTypeNone
	}
	return []*ObjectDiff{o}
}

func anyEdited(fs []*FieldDiff) bool {
	for _, f := range fs {
		if f.Type != DiffTypeNone {
			return true
		}
	}
	return false
}

func anyObjEdited(os []*ObjectDiff) bool {
	for _, o := range os {
		if o.Type != DiffTypeNone {
			return true
		}
	}
	return false
}

func groupName(g *TaskGroup) string { return g.Name }

func taskName(t *Task) string { return t.Name }

func names[T any](xs []*T, name func(*T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	return out
}

func findNamed[T any](xs []*T, n string, name func(*T) string) *T {
	for _, x := range xs {
		if name(x) == n {
			return x
		}
	}
	return nil
}

func unionNames(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range append(append([]string(nil), a...), b...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

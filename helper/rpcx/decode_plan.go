package rpcx

import (
	"encoding"
	"reflect"
	"strings"
	"sync"
	"time"
)

// typePlan is what the decode cost walk needs to know about a Go type,
// worked out once per type: asking reflect for it on every value would
// make the walk cost as much as the decode it guards.
type typePlan struct {
	typ  reflect.Type
	kind reflect.Kind
	size uint64
	// unmarshals: the type decodes itself from bytes (time.Time and other
	// encoding.BinaryUnmarshalers), as go-msgpack lets it.
	unmarshals bool
	// elem is a pointer's, slice's, array's or map's element; key a map's.
	elem, key *typePlan
	// fields maps a struct's wire names to its fields.
	fields map[string]fieldPlan
}

// fieldPlan is where the decoder puts a struct field it finds by name.
type fieldPlan struct {
	plan *typePlan
	// embedded is what reaching the field allocates first: the structs
	// behind embedded pointers on its path.
	embedded uint64
}

// decodesAs is a type that decodes itself through the msgpack shape of
// another type, which DecodesAs returns a value of (structs.Attributes
// decodes a map[string]string). The walk charges it as that type, which
// must cost at least what the type's own decoding allocates.
type decodesAs interface{ DecodesAs() any }

var (
	decodesAsType         = reflect.TypeFor[decodesAs]()
	timeType              = reflect.TypeFor[time.Time]()
	binaryUnmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()

	// plans holds finished plans, reflect.Type -> *typePlan. A plan links
	// to the plans of the types inside it, cycles included, and is
	// published only once every plan it reaches is complete.
	plans   sync.Map
	plansMu sync.Mutex // serialises building
)

func planFor(t reflect.Type) *typePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*typePlan)
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	building := map[reflect.Type]*typePlan{}
	p := buildPlan(t, building)
	for bt, bp := range building {
		plans.Store(bt, bp)
	}
	return p
}

func buildPlan(t reflect.Type, building map[reflect.Type]*typePlan) *typePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*typePlan)
	}
	if p, ok := building[t]; ok {
		return p // a recursive type: filled in further up
	}
	if shape := decodedShape(t); shape != nil {
		p := buildPlan(shape, building)
		building[t] = p
		return p
	}
	p := &typePlan{
		typ:        t,
		kind:       t.Kind(),
		size:       uint64(t.Size()),
		unmarshals: t == timeType || reflect.PointerTo(t).Implements(binaryUnmarshalerType),
	}
	building[t] = p
	switch p.kind {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		p.elem = buildPlan(t.Elem(), building)
	case reflect.Map:
		p.key = buildPlan(t.Key(), building)
		p.elem = buildPlan(t.Elem(), building)
	case reflect.Struct:
		p.fields = map[string]fieldPlan{}
		collectFields(t, 0, 0, map[string]int{}, p.fields, building)
	}
	return p
}

// decodedShape is the type t decodes as (see decodesAs), nil for a type
// that decodes as itself.
func decodedShape(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer || !reflect.PointerTo(t).Implements(decodesAsType) {
		return nil
	}
	shape := reflect.TypeOf(reflect.New(t).Interface().(decodesAs).DecodesAs())
	if shape == t {
		return nil
	}
	return shape
}

// collectFields maps the names a struct's fields have on the wire to the
// fields, as go-msgpack does with MsgpackHandle's settings: exported
// fields under their `codec` tag name or their own name, fields of
// embedded structs promoted unless an outer field has the same name.
func collectFields(t reflect.Type, depth int, embedded uint64, depths map[string]int, out map[string]fieldPlan, building map[reflect.Type]*typePlan) {
	if depth > maxNesting {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("codec"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft, extra := f.Type, embedded
			if ft.Kind() == reflect.Pointer {
				ft, extra = ft.Elem(), extra+allocCost(uint64(ft.Elem().Size()))
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, depth+1, extra, depths, out, building)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if d, seen := depths[name]; seen && d <= depth {
			continue
		}
		depths[name] = depth
		out[name] = fieldPlan{plan: buildPlan(f.Type, building), embedded: embedded}
	}
}

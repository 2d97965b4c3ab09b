package fuzzseed

import (
	"maps"
	"math"
	"reflect"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"pgregory.net/rapid"
)

// maxValueDepth bounds how deeply Value nests pointers, slices and maps, so
// recursive types (a diff of diffs) end.
const maxValueDepth = 6

// Value draws an arbitrary value of type typ, for round-trip properties
// over the RPC and raft types: every exported field filled or left empty,
// pointers nil or set, collections empty or not.
//
// It draws only what Drover's own encoders ever send, so that a value
// that does not survive a trip is a bug rather than an artefact:
//
//   - times are UTC with nanoseconds and no monotonic reading, as they are
//     after any trip through an encoder;
//   - floats are finite (NaN equals nothing, itself included);
//   - an interface holds what encoding/json gives a map[string]any
//     (string, float64, bool, nil, []any, map[string]any), the only way a
//     value reaches an interface field (task config, scaling policy).
//
// Unexported fields are left zero; no encoder sees them. A type that
// keeps its value in unexported fields and decodes itself through the
// shape of another type (DecodesAs, as structs.Attributes decodes a
// map[string]string) is drawn as that shape and read from its JSON.
func Value(t *rapid.T, typ reflect.Type) reflect.Value {
	return value(t, typ, 0)
}

// decodesAs is a type that decodes itself through the shape of another
// type, which DecodesAs returns a value of (helper/rpcx's cost estimate
// reads it too).
type decodesAs interface{ DecodesAs() any }

// shapeHandle is the msgpack handle convertShape goes through, set as
// helper/rpcx's is for what matters here (strings as strings).
var shapeHandle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString, h.WriteExt = true, true
	return h
}()

// convertShape encodes from and decodes the bytes into into (a pointer):
// how a value of a decodesAs type and its shape are turned into each
// other. msgpack, not JSON, so that bytes that are not UTF-8 stay as
// they are.
func convertShape(from, into any) error {
	var b []byte
	if err := codec.NewEncoderBytes(&b, shapeHandle).Encode(from); err != nil {
		return err
	}
	return codec.NewDecoderBytes(b, shapeHandle).Decode(into)
}

// decodedShape is the type typ decodes as, nil for a type that decodes
// as itself.
func decodedShape(typ reflect.Type) reflect.Type {
	if typ.Kind() == reflect.Pointer || !reflect.PointerTo(typ).Implements(reflect.TypeFor[decodesAs]()) {
		return nil
	}
	shape := reflect.TypeOf(reflect.New(typ).Interface().(decodesAs).DecodesAs())
	if shape == typ {
		return nil
	}
	return shape
}

var (
	timeType = reflect.TypeFor[time.Time]()
	anyType  = reflect.TypeFor[any]()
)

func value(t *rapid.T, typ reflect.Type, depth int) reflect.Value {
	v := reflect.New(typ).Elem()
	if typ == timeType {
		ns := rapid.Int64Range(-1<<62, 1<<62).Draw(t, "unixnano")
		v.Set(reflect.ValueOf(time.Unix(0, ns).UTC()))
		return v
	}
	if shape := decodedShape(typ); shape != nil {
		if err := convertShape(value(t, shape, depth).Interface(), v.Addr().Interface()); err != nil {
			t.Fatalf("fuzzseed: drawing a %s as a %s: %v", typ, shape, err)
		}
		return v
	}
	deeper := depth < maxValueDepth
	switch typ.Kind() {
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, "bool"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := typ.Bits()
		v.SetInt(rapid.Int64Range(-1<<(bits-1), 1<<(bits-1)-1).Draw(t, typ.String()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(rapid.Uint64Range(0, math.MaxUint64>>(64-typ.Bits())).Draw(t, typ.String()))
	case reflect.Float32:
		v.SetFloat(float64(rapid.Float32().Filter(finite32).Draw(t, "float32")))
	case reflect.Float64:
		v.SetFloat(rapid.Float64().Filter(finite64).Draw(t, "float64"))
	case reflect.String:
		v.SetString(rapid.String().Draw(t, "string"))
	case reflect.Pointer:
		if deeper && rapid.Bool().Draw(t, "set") {
			v.Set(value(t, typ.Elem(), depth+1).Addr())
		}
	case reflect.Slice:
		if !deeper {
			break
		}
		n := rapid.IntRange(0, 3).Draw(t, "len")
		if typ.Elem().Kind() == reflect.Uint8 {
			n = rapid.IntRange(0, 64).Draw(t, "bytes")
		}
		s := reflect.MakeSlice(typ, n, n)
		for i := range n {
			s.Index(i).Set(value(t, typ.Elem(), depth+1))
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			v.Index(i).Set(value(t, typ.Elem(), depth+1))
		}
	case reflect.Map:
		if !deeper {
			break
		}
		m := reflect.MakeMap(typ)
		for range rapid.IntRange(0, 3).Draw(t, "entries") {
			m.SetMapIndex(value(t, typ.Key(), depth+1), value(t, typ.Elem(), depth+1))
		}
		v.Set(m)
	case reflect.Struct:
		fillStruct(t, v, depth, nil)
	case reflect.Interface:
		if typ == anyType {
			if x := jsonValue(t, depth); x != nil {
				v.Set(reflect.ValueOf(x))
			}
		}
	}
	return v
}

// fillStruct draws v's exported fields. A field of an embedded struct that
// a field of the same name in an outer struct shadows is left zero: under
// Go's promotion rules the encoders see only the outer one, so it never
// crosses the wire (QueryMeta.Index in a response that has its own Index).
func fillStruct(t *rapid.T, v reflect.Value, depth int, shadowed map[string]bool) {
	typ := v.Type()
	inner := maps.Clone(shadowed)
	if inner == nil {
		inner = map[string]bool{}
	}
	for i := range typ.NumField() {
		if f := typ.Field(i); !embeddedStruct(f) {
			inner[f.Name] = true
		}
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch {
		case !f.IsExported() || shadowed[f.Name]:
		case embeddedStruct(f):
			fillStruct(t, v.Field(i), depth+1, inner)
		default:
			v.Field(i).Set(value(t, f.Type, depth+1))
		}
	}
}

func embeddedStruct(f reflect.StructField) bool {
	return f.Anonymous && f.Type.Kind() == reflect.Struct
}

// jsonValue draws what encoding/json decodes into an interface.
func jsonValue(t *rapid.T, depth int) any {
	kinds := 4 // nil, string, float64, bool
	if depth < maxValueDepth {
		kinds = 6 // and []any, map[string]any
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "json kind") {
	case 1:
		return rapid.String().Draw(t, "json string")
	case 2:
		return rapid.Float64().Filter(finite64).Draw(t, "json number")
	case 3:
		return rapid.Bool().Draw(t, "json bool")
	case 4:
		out := []any{}
		for range rapid.IntRange(0, 3).Draw(t, "json len") {
			out = append(out, jsonValue(t, depth+1))
		}
		return out
	case 5:
		out := map[string]any{}
		for range rapid.IntRange(0, 3).Draw(t, "json entries") {
			out[rapid.String().Draw(t, "json key")] = jsonValue(t, depth+1)
		}
		return out
	}
	return nil
}

func finite32(f float32) bool { return finite64(float64(f)) }
func finite64(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

package jobspec

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// decodeAttr evaluates a and converts the value to T the way HCL converts
// values everywhere (the number 5 and the string "5" are both fine for an
// int). ok is false for null, which leaves the destination unset, and for
// errors, which are recorded.
func decodeAttr[T any](d *decoder, a *hcl.Attribute) (out T, ok bool) {
	val, ok := d.eval(a.Expr)
	if !ok || val.IsNull() {
		return out, false
	}
	ty, err := gocty.ImpliedType(out)
	if err != nil {
		panic("jobspec: no HCL type for destination: " + err.Error())
	}
	val, err = convert.Convert(val, ty)
	if err != nil {
		d.errorf(a.Expr.Range(), "Incorrect attribute value type",
			"Inappropriate value for attribute %q: %s.", a.Name, err)
		return out, false
	}
	if err := gocty.FromCtyValue(val, &out); err != nil {
		d.errorf(a.Expr.Range(), "Invalid attribute value", "Invalid value for attribute %q: %s.", a.Name, err)
		return out, false
	}
	return out, true
}

// value decodes an argument into a plain field.
func value[T any](dst *T) attrFunc {
	return func(d *decoder, a *hcl.Attribute) {
		if v, ok := decodeAttr[T](d, a); ok {
			*dst = v
		}
	}
}

// pointer decodes an argument into an optional field, which stays nil when
// the argument is absent or null.
func pointer[T any](dst **T) attrFunc {
	return func(d *decoder, a *hcl.Attribute) {
		if v, ok := decodeAttr[T](d, a); ok {
			*dst = &v
		}
	}
}

// decodeDuration reads a duration written as a Go duration string ("30s",
// "1h30m"). A bare number is taken as nanoseconds, which is how the API's
// JSON writes durations.
func decodeDuration(d *decoder, a *hcl.Attribute) (time.Duration, bool) {
	val, ok := d.eval(a.Expr)
	if !ok || val.IsNull() {
		return 0, false
	}
	if val.Type() == cty.Number {
		var ns int64
		if err := gocty.FromCtyValue(val, &ns); err != nil {
			d.errorf(a.Expr.Range(), "Invalid duration", "Invalid value for attribute %q: %s.", a.Name, err)
			return 0, false
		}
		return time.Duration(ns), true
	}
	str, err := convert.Convert(val, cty.String)
	if err != nil {
		d.errorf(a.Expr.Range(), "Incorrect attribute value type",
			`Inappropriate value for attribute %q: a duration string such as "30s" is required.`, a.Name)
		return 0, false
	}
	dur, err := time.ParseDuration(str.AsString())
	if err != nil {
		d.errorf(a.Expr.Range(), "Invalid duration",
			`Attribute %q must be a duration such as "30s", "5m" or "1h30m": %s.`, a.Name, err)
		return 0, false
	}
	return dur, true
}

// duration decodes a duration argument into a plain field.
func duration(dst *time.Duration) attrFunc {
	return func(d *decoder, a *hcl.Attribute) {
		if v, ok := decodeDuration(d, a); ok {
			*dst = v
		}
	}
}

// durationPtr decodes a duration argument into an optional field.
func durationPtr(dst **time.Duration) attrFunc {
	return func(d *decoder, a *hcl.Attribute) {
		if v, ok := decodeDuration(d, a); ok {
			*dst = &v
		}
	}
}

// mapSpec decodes a map written as an argument (meta = { a = "b" }) or as a
// block (meta { a = "b" }); in JSON both are an object. Nomad accepts both
// spellings, and the argument form allows keys that are not identifiers.
type mapSpec struct {
	attr  attrFunc
	block blockSpec
}

// stringMap is a map of strings, such as meta or env.
func stringMap(dst *map[string]string) mapSpec {
	return mapOf(dst)
}

// mapOf is a map of any element type, such as a check's header block,
// whose values are lists of strings.
func mapOf[T any](dst *map[string]T) mapSpec {
	asAttr := func(d *decoder, a *hcl.Attribute) {
		if v, ok := decodeAttr[map[string]T](d, a); ok {
			*dst = v
		}
	}
	asBlock := one(func(d *decoder, b *hcl.Block) {
		m := map[string]T{}
		for _, a := range d.attributes(b.Body) {
			if v, ok := decodeAttr[T](d, a); ok {
				m[a.Name] = v
			}
		}
		*dst = m
	})
	return mapSpec{attr: asAttr, block: asBlock}
}

package config

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/drover-sched/drover/structs"
)

// The functions below build attrFuncs for one kind of value each. A value
// of the wrong kind is a problem naming the key, the position of the value
// and what was expected; the destination is left unchanged.

func strAttr(dst *string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) { d.decodeString(key, a.Expr, dst) }
}

func boolAttr(dst *bool) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		v, ok := d.value(a.Expr)
		if !ok {
			return
		}
		b, err := convert.Convert(v, cty.Bool)
		if err != nil {
			d.problem(a.Expr.Range(), key, "expected true or false, got %s", describe(v))
			return
		}
		*dst = b.True()
	}
}

func intAttr(dst *int) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		if n, ok := d.decodeInt(key, a, 0, 1<<31-1); ok {
			*dst = n
		}
	}
}

func intPtrAttr(dst **int) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		if n, ok := d.decodeInt(key, a, 0, 1<<31-1); ok {
			*dst = &n
		}
	}
}

// portAttr accepts 0 (pick a free port) to 65535.
func portAttr(dst *int) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		if n, ok := d.decodeInt(key, a, 0, 65535); ok {
			*dst = n
		}
	}
}

func floatAttr(dst *float64, min, max float64) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		v, ok := d.value(a.Expr)
		if !ok {
			return
		}
		n, err := convert.Convert(v, cty.Number)
		if err != nil {
			d.problem(a.Expr.Range(), key, "expected a number, got %s", describe(v))
			return
		}
		f, _ := n.AsBigFloat().Float64()
		if f < min || f > max {
			d.problem(a.Expr.Range(), key, "expected a number between %g and %g, got %g", min, max, f)
			return
		}
		*dst = f
	}
}

func durAttr(dst *time.Duration) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var s string
		if !d.decodeString(key, a.Expr, &s) {
			return
		}
		dur, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || dur < 0 {
			d.problem(a.Expr.Range(), key, "expected a duration such as \"30s\" or \"5m\", got %q", s)
			return
		}
		*dst = dur
	}
}

func listAttr(dst *[]string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		v, ok := d.value(a.Expr)
		if !ok {
			return
		}
		t := v.Type()
		if !t.IsListType() && !t.IsTupleType() && !t.IsSetType() {
			d.problem(a.Expr.Range(), key, "expected a list of strings, got %s", describe(v))
			return
		}
		out := []string{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			s, err := toString(e)
			if err != nil {
				d.problem(a.Expr.Range(), key, "expected a list of strings, but an element is %s", describe(e))
				return
			}
			out = append(out, s)
		}
		*dst = out
	}
}

// oneOfAttr is a string restricted to a set of values (compared
// case-insensitively, stored as written).
func oneOfAttr(dst *string, allowed ...string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var s string
		if !d.decodeString(key, a.Expr, &s) {
			return
		}
		for _, ok := range allowed {
			if strings.EqualFold(s, ok) {
				*dst = s
				return
			}
		}
		d.problem(a.Expr.Range(), key, "expected one of %s, got %q", strings.Join(allowed, ", "), s)
	}
}

func (d *decoder) decodeString(key string, expr hcl.Expression, dst *string) bool {
	v, ok := d.value(expr)
	if !ok {
		return false
	}
	s, err := toString(v)
	if err != nil {
		d.problem(expr.Range(), key, "expected a string, got %s", describe(v))
		return false
	}
	*dst = s
	return true
}

func (d *decoder) decodeInt(key string, a *hcl.Attribute, min, max int) (int, bool) {
	v, ok := d.value(a.Expr)
	if !ok {
		return 0, false
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		d.problem(a.Expr.Range(), key, "expected a whole number, got %s", describe(v))
		return 0, false
	}
	f := n.AsBigFloat()
	if !f.IsInt() {
		d.problem(a.Expr.Range(), key, "expected a whole number, got %s", f.Text('g', -1))
		return 0, false
	}
	if f.Cmp(big.NewFloat(float64(min))) < 0 || f.Cmp(big.NewFloat(float64(max))) > 0 {
		d.problem(a.Expr.Range(), key, "expected a number between %d and %d, got %s", min, max, f.Text('g', -1))
		return 0, false
	}
	i, _ := f.Int64()
	return int(i), true
}

// toString accepts strings, numbers and bools, as Nomad's HCL1 decoder
// did (meta values are often written unquoted).
func toString(v cty.Value) (string, error) {
	if v.Type() != cty.String && v.Type() != cty.Number && v.Type() != cty.Bool {
		return "", fmt.Errorf("not a string")
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", err
	}
	return s.AsString(), nil
}

// describe names a value for an error message: its type, and the value
// itself when it is short and scalar.
func describe(v cty.Value) string {
	switch v.Type() {
	case cty.String:
		return fmt.Sprintf("string %q", v.AsString())
	case cty.Number:
		return "number " + v.AsBigFloat().Text('g', -1)
	case cty.Bool:
		return fmt.Sprintf("bool %t", v.True())
	}
	return v.Type().FriendlyName()
}

// portSpecAttr is a port list such as "22,80,8000-8100".
func portSpecAttr(dst *string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var s string
		if !d.decodeString(key, a.Expr, &s) {
			return
		}
		if _, err := structs.ParsePortRanges(s); err != nil {
			d.problem(a.Expr.Range(), key, "expected ports such as \"22,80,8000-8100\": %v", err)
			return
		}
		*dst = s
	}
}

package jobspec

import (
	"math/big"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// config decodes a task's driver config. Its shape belongs to the driver, so
// it has no schema here: every argument becomes a Go value (string, int or
// float64, bool, []interface{}, map[string]interface{}) and every nested
// block a map in a list under the block's type, the way Nomad represents
// driver config:
//
//	config {                      map[string]interface{}{
//	  image = "redis:7"             "image": "redis:7",
//	  mount { type = "bind" }       "mount": []map[string]interface{}{{"type": "bind"}},
//	}                             }
//
// A labelled block nests its body under each label in turn:
// port_map "http" { ... } becomes {"port_map": [{"http": [{...}]}]}.
func (d *decoder) config(body hcl.Body) map[string]interface{} {
	syn := d.syntax.lookup(body)
	if syn == nil {
		// JSON: objects and arrays are values already.
		out := map[string]interface{}{}
		for _, a := range d.attributes(body) {
			if v, ok := d.goValue(a.Expr); ok {
				out[a.Name] = v
			}
		}
		return out
	}

	content, diags := body.Content(schemaOf(syn))
	d.diags = append(d.diags, diags...)
	out := make(map[string]interface{}, len(content.Attributes)+len(content.Blocks))
	for name, a := range content.Attributes {
		if v, ok := d.goValue(a.Expr); ok {
			out[name] = v
		}
	}
	for _, b := range content.Blocks {
		if a, clash := content.Attributes[b.Type]; clash {
			d.errorf(b.DefRange, "Duplicate config key",
				"%q is already set as an argument at %s; use either the argument or blocks.", b.Type, a.Range)
			continue
		}
		item := d.config(b.Body)
		for i := len(b.Labels) - 1; i >= 0; i-- {
			item = map[string]interface{}{b.Labels[i]: []map[string]interface{}{item}}
		}
		list, _ := out[b.Type].([]map[string]interface{})
		out[b.Type] = append(list, item)
	}
	return out
}

// schemaOf builds the schema that accepts exactly what a body holds, so that
// the body can be read through Content, which expands dynamic blocks. A
// dynamic block stands for blocks of its label's type, with as many labels
// as its labels argument lists.
func schemaOf(syn *hclsyntax.Body) *hcl.BodySchema {
	schema := &hcl.BodySchema{}
	for name := range syn.Attributes {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
	}
	seen := map[string]bool{}
	for _, b := range syn.Blocks {
		typ, labels := b.Type, len(b.Labels)
		if b.Type == "dynamic" && len(b.Labels) == 1 {
			typ, labels = b.Labels[0], 0
			if a, ok := b.Body.Attributes["labels"]; ok {
				if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
					labels = len(tuple.Exprs)
				}
			}
		}
		if seen[typ] {
			continue
		}
		seen[typ] = true
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{
			Type:       typ,
			LabelNames: slices.Repeat([]string{"label"}, labels),
		})
	}
	return schema
}

// goValue evaluates expr into the plain Go values driver config is made of.
func (d *decoder) goValue(expr hcl.Expression) (interface{}, bool) {
	val, ok := d.eval(expr)
	if !ok {
		return nil, false
	}
	return goValueOf(val), true
}

// goValueOf converts a known cty value. Whole numbers become int (int64 if
// they do not fit) so that drivers can type-assert ports and counts; other
// numbers become float64. A list whose elements are all objects becomes
// []map[string]interface{}, matching how blocks are represented.
func goValueOf(val cty.Value) interface{} {
	if val.IsNull() {
		return nil
	}
	ty := val.Type()
	switch {
	case ty == cty.String:
		return val.AsString()
	case ty == cty.Bool:
		return val.True()
	case ty == cty.Number:
		return goNumber(val.AsBigFloat())
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		var elems []cty.Value
		for it := val.ElementIterator(); it.Next(); {
			_, v := it.Element()
			elems = append(elems, v)
		}
		if len(elems) > 0 && allObjects(elems) {
			maps := make([]map[string]interface{}, len(elems))
			for i, v := range elems {
				maps[i] = goValueOf(v).(map[string]interface{})
			}
			return maps
		}
		list := make([]interface{}, len(elems))
		for i, v := range elems {
			list[i] = goValueOf(v)
		}
		return list
	case ty.IsMapType() || ty.IsObjectType():
		m := map[string]interface{}{}
		for it := val.ElementIterator(); it.Next(); {
			k, v := it.Element()
			m[k.AsString()] = goValueOf(v)
		}
		return m
	}
	return nil
}

func allObjects(vals []cty.Value) bool {
	for _, v := range vals {
		ty := v.Type()
		if v.IsNull() || !(ty.IsObjectType() || ty.IsMapType()) {
			return false
		}
	}
	return true
}

func goNumber(f *big.Float) interface{} {
	if i, acc := f.Int64(); acc == big.Exact {
		if int64(int(i)) == i {
			return int(i)
		}
		return i
	}
	v, _ := f.Float64()
	return v
}

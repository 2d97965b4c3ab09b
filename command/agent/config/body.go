package config

import (
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// section describes the keys one configuration body understands. The
// walker reads it with PartialContent rather than Content so that a key
// Drover does not know is a warning, not an error: agent files are shared
// with Nomad, and Nomad-only settings (consul, vault, telemetry, ...) must
// not stop an agent from starting.
type section struct {
	// path names the body in messages ("client.reserved").
	path string
	// attrs decode arguments; key is the full dotted name of the argument.
	attrs map[string]attrFunc
	// blocks decode nested blocks, possibly labelled.
	blocks map[string]blockSpec
	// maps are string maps (meta, options), accepted both as a block and
	// as an object argument, the two spellings found in Nomad configs.
	maps map[string]func(map[string]string)
	// ignored are keys Nomad has and Drover deliberately ignores, with
	// the reason given in the warning.
	ignored map[string]string
}

type attrFunc func(d *decoder, key string, a *hcl.Attribute)

type blockSpec struct {
	labels []string
	decode func(d *decoder, b *hcl.Block)
}

// walk decodes body according to s.
func (d *decoder) walk(body hcl.Body, s *section) {
	syn, native := body.(*hclsyntax.Body)
	d.warnUnknown(body, syn, s)

	schema := &hcl.BodySchema{}
	for name := range s.attrs {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
	}
	for name, b := range s.blocks {
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: name, LabelNames: b.labels})
	}
	for name := range s.maps {
		if native && syn.Attributes[name] == nil {
			schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: name})
		} else {
			schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
		}
	}
	content, _, diags := body.PartialContent(schema)
	d.addDiags(diags)

	attrs := make([]*hcl.Attribute, 0, len(content.Attributes))
	for _, a := range content.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Range.Start.Byte < attrs[j].Range.Start.Byte })
	for _, a := range attrs {
		key := s.key(a.Name)
		if set, ok := s.maps[a.Name]; ok {
			if m, ok := d.stringMap(key, a); ok {
				set(m)
			}
			continue
		}
		s.attrs[a.Name](d, key, a)
	}
	for _, b := range content.Blocks {
		if set, ok := s.maps[b.Type]; ok {
			set(d.blockMap(s.key(b.Type), b.Body))
			continue
		}
		s.blocks[b.Type].decode(d, b)
	}
}

func (s *section) key(name string) string {
	if s.path == "" {
		return name
	}
	return s.path + "." + name
}

func (s *section) known(name string) bool {
	_, a := s.attrs[name]
	_, b := s.blocks[name]
	_, m := s.maps[name]
	return a || b || m
}

// warnUnknown warns about every key in body that s does not decode, in
// file order. Native bodies are read from the syntax tree; a JSON body has
// no tree, but JustAttributes lists its properties with their positions.
func (d *decoder) warnUnknown(body hcl.Body, syn *hclsyntax.Body, s *section) {
	type item struct {
		name string
		rng  hcl.Range
	}
	var items []item
	if syn != nil {
		for name, a := range syn.Attributes {
			items = append(items, item{name, a.NameRange})
		}
		for _, b := range syn.Blocks {
			items = append(items, item{b.Type, b.TypeRange})
		}
	} else {
		attrs, _ := body.JustAttributes()
		for name, a := range attrs {
			items = append(items, item{name, a.NameRange})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].rng.Start.Byte < items[j].rng.Start.Byte })
	for _, it := range items {
		if s.known(it.name) {
			d.checkForm(syn, it.name, it.rng, s)
			continue
		}
		if why, ok := s.ignored[it.name]; ok {
			d.warn(it.rng, "%q is not supported by Drover (%s); ignored", s.key(it.name), why)
		} else {
			d.warn(it.rng, "unknown key %q; ignored", s.key(it.name))
		}
	}
}

// checkForm reports a known key written in the wrong form (`server =
// true` for a block, `enabled { }` for an argument). PartialContent leaves
// such keys in the remaining body without a word, so they are caught
// here. JSON cannot tell the forms apart and is left to the decoders.
func (d *decoder) checkForm(syn *hclsyntax.Body, name string, rng hcl.Range, s *section) {
	if syn == nil {
		return
	}
	_, isBlock := s.blocks[name]
	_, isAttr := s.attrs[name]
	switch {
	case isBlock && syn.Attributes[name] != nil:
		d.problem(rng, s.key(name), "expected a block (%s { ... }), not an argument", name)
	case isAttr:
		for _, b := range syn.Blocks {
			if b.Type == name {
				d.problem(rng, s.key(name), "expected an argument (%s = ...), not a block", name)
				return
			}
		}
	}
}

// blockMap reads a map block: every argument is a string value.
func (d *decoder) blockMap(key string, body hcl.Body) map[string]string {
	attrs, diags := body.JustAttributes()
	d.addDiags(diags)
	out := make(map[string]string, len(attrs))
	for name, a := range attrs {
		var s string
		if d.decodeString(key+"."+name, a.Expr, &s) {
			out[name] = s
		}
	}
	return out
}

// stringMap reads a map argument (`meta = { rack = "r1" }`).
func (d *decoder) stringMap(key string, a *hcl.Attribute) (map[string]string, bool) {
	v, ok := d.value(a.Expr)
	if !ok {
		return nil, false
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		d.problem(a.Expr.Range(), key, "expected a map of strings, got %s", v.Type().FriendlyName())
		return nil, false
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		s, err := toString(ev)
		if err != nil {
			d.problem(a.Expr.Range(), key+"."+k.AsString(), "expected a string, got %s", ev.Type().FriendlyName())
			continue
		}
		out[k.AsString()] = s
	}
	return out, true
}

// value evaluates an expression without variables or functions: agent
// configuration, like Nomad's, is literal.
func (d *decoder) value(expr hcl.Expression) (cty.Value, bool) {
	v, diags := expr.Value(nil)
	d.addDiags(diags)
	if diags.HasErrors() || v.IsNull() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return v, true
}

// goValue turns a plugin config value into plain Go values: strings,
// int64 or float64, bools, []any and map[string]any.
func goValue(v cty.Value) any {
	if v.IsNull() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		f := v.AsBigFloat()
		if i, acc := f.Int64(); acc == 0 {
			return i
		}
		x, _ := f.Float64()
		return x
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, goValue(e))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = goValue(e)
		}
		return out
	}
	return nil
}

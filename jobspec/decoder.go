package jobspec

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// decoder turns the job block into an api.Job. It collects diagnostics
// instead of stopping at the first one, so that a user sees every problem of
// a file at once.
//
// Each block kind has a method (job, group, task, restart, ...) that
// describes the block's body with a spec and lets decodeBody do the
// reading. Doing this by hand rather than with struct tags keeps api free of
// HCL concerns and makes the job file's quirks (constraint shorthands,
// meta as block or map, driver config) plain code.
type decoder struct {
	ctx     *hcl.EvalContext
	sources sources
	syntax  syntaxIndex
	diags   hcl.Diagnostics
}

// spec describes one block body: the arguments and nested blocks it may
// hold and how to decode each. maps are the names that may be written as an
// argument or a block (meta, env), either way but only once.
type spec struct {
	attrs    map[string]attrFunc
	blocks   map[string]blockSpec
	maps     map[string]mapSpec
	required []string
}

// attrFunc decodes one argument into its destination.
type attrFunc func(d *decoder, a *hcl.Attribute)

// blockSpec says how to decode one kind of nested block.
type blockSpec struct {
	labels []string
	// many allows the block more than once.
	many   bool
	decode func(d *decoder, b *hcl.Block)
}

// one is a block that may appear at most once.
func one(decode func(d *decoder, b *hcl.Block)) blockSpec {
	return blockSpec{decode: decode}
}

// many is a block that may repeat.
func many(decode func(d *decoder, b *hcl.Block)) blockSpec {
	return blockSpec{many: true, decode: decode}
}

// labeled is a repeatable block with labels.
func labeled(decode func(d *decoder, b *hcl.Block), labels ...string) blockSpec {
	return blockSpec{many: true, labels: labels, decode: decode}
}

// decodeBody reads body according to s. Arguments and blocks are decoded in
// source order, so diagnostics come out in the order of the file.
func (d *decoder) decodeBody(body hcl.Body, s spec) {
	if len(s.maps) > 0 {
		s.attrs = maps.Clone(s.attrs)
		s.blocks = maps.Clone(s.blocks)
		if s.attrs == nil {
			s.attrs = map[string]attrFunc{}
		}
		if s.blocks == nil {
			s.blocks = map[string]blockSpec{}
		}
		for name, m := range s.maps {
			s.attrs[name] = m.attr
			s.blocks[name] = m.block
		}
	}

	schema := &hcl.BodySchema{}
	var either []hcl.AttributeSchema
	for _, name := range slices.Sorted(maps.Keys(s.attrs)) {
		if _, isBlock := s.blocks[name]; isBlock {
			either = append(either, hcl.AttributeSchema{Name: name})
			continue
		}
		schema.Attributes = append(schema.Attributes,
			hcl.AttributeSchema{Name: name, Required: slices.Contains(s.required, name)})
	}
	for _, name := range slices.Sorted(maps.Keys(s.blocks)) {
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: name, LabelNames: s.blocks[name].labels})
	}
	ignored, ignoredRanges := d.ignoredBlocks(body, s)
	for _, name := range slices.Sorted(maps.Keys(ignored)) {
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: name, LabelNames: labelNames(ignored[name])})
	}

	// Names that may be an argument or a block are read as arguments first;
	// whatever is left is read with the block schema.
	seenAttr := map[string]*hcl.Attribute{}
	var attrs []*hcl.Attribute
	if len(either) > 0 {
		content, rest, diags := body.PartialContent(&hcl.BodySchema{Attributes: either})
		d.diags = append(d.diags, diags...)
		for name, a := range content.Attributes {
			seenAttr[name] = a
			attrs = append(attrs, a)
		}
		body = rest
	}

	content, diags := body.Content(schema)
	d.diags = append(d.diags, dropInside(diags, ignoredRanges)...)
	for _, a := range content.Attributes {
		attrs = append(attrs, a)
	}
	slices.SortFunc(attrs, func(a, b *hcl.Attribute) int { return cmp.Compare(a.Range.Start.Byte, b.Range.Start.Byte) })
	for _, a := range attrs {
		s.attrs[a.Name](d, a)
	}

	seenBlock := map[string]*hcl.Block{}
	for _, b := range content.Blocks {
		if _, skip := ignored[b.Type]; skip {
			continue // warned about in ignoredBlocks
		}
		bs := s.blocks[b.Type]
		if a, ok := seenAttr[b.Type]; ok {
			d.diags = append(d.diags, newDiag(b.DefRange, fmt.Sprintf("Duplicate %s definition", b.Type),
				"%s is already set as an argument at %s; use either the argument or the block.", b.Type, a.Range))
			continue
		}
		if prev, ok := seenBlock[b.Type]; ok && !bs.many {
			d.diags = append(d.diags, newDiag(b.DefRange, fmt.Sprintf("Duplicate %s block", b.Type),
				"Only one %s block is allowed here; another was defined at %s.", b.Type, prev.DefRange))
			continue
		}
		seenBlock[b.Type] = b
		bs.decode(d, b)
	}
}

// attributes returns the arguments of a body that holds only arguments with
// names of the user's choosing (meta, env, locals, ...), in source order.
//
// The names come from JustAttributes; the values are then read again through
// Content, because inside a dynamic block only Content gives expressions
// that see the block's iterator.
func (d *decoder) attributes(body hcl.Body) []*hcl.Attribute {
	raw, diags := body.JustAttributes()
	d.diags = append(d.diags, diags...)
	if len(raw) == 0 {
		return nil
	}
	schema := &hcl.BodySchema{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
	}
	content, _, diags := body.PartialContent(schema)
	d.diags = append(d.diags, diags...)
	attrs := slices.Collect(maps.Values(content.Attributes))
	slices.SortFunc(attrs, func(a, b *hcl.Attribute) int { return cmp.Compare(a.Range.Start.Byte, b.Range.Start.Byte) })
	return attrs
}

// eval evaluates expr in the job's context; see evaluate. ok is false if
// the value could not be computed, in which case a diagnostic was recorded.
func (d *decoder) eval(expr hcl.Expression) (cty.Value, bool) {
	val, diags := evaluate(d.ctx, expr, d.sources)
	d.diags = append(d.diags, diags...)
	return val, !diags.HasErrors()
}

// errorf records an error diagnostic about rng.
func (d *decoder) errorf(rng hcl.Range, summary, detail string, args ...any) {
	d.diags = append(d.diags, newDiag(rng, summary, detail, args...))
}

// syntaxIndex finds the native syntax body behind a decoded body. Driver
// config has no schema, so its nested block types can only be learnt from
// the syntax; the key is where the body starts, which every wrapper of a
// body (dynamic block expansion, partial content) keeps.
type syntaxIndex map[bodyKey]*hclsyntax.Body

type bodyKey struct {
	file string
	off  int
}

func indexSyntax(body hcl.Body) syntaxIndex {
	idx := syntaxIndex{}
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		idx[bodyKey{b.SrcRange.Filename, b.SrcRange.Start.Byte}] = b
		for _, child := range b.Blocks {
			walk(child.Body)
		}
	}
	if b, ok := body.(*hclsyntax.Body); ok {
		walk(b)
	}
	return idx
}

func (idx syntaxIndex) lookup(body hcl.Body) *hclsyntax.Body {
	rng := body.MissingItemRange()
	return idx[bodyKey{rng.Filename, rng.Start.Byte}]
}

// Short names for spec literals.
type (
	attrSet  = map[string]attrFunc
	blockSet = map[string]blockSpec
	mapSet   = map[string]mapSpec
)

package jobspec

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// evaluate evaluates expr in ctx, keeping runtime interpolations as text.
//
// Every root name expr refers to that ctx does not define (NOMAD_PORT_http,
// attr, node, meta, env, ...) is a runtime reference: only the client knows
// its value. For this one evaluation such a root is bound to a placeholder
// whose reachable values are the strings "${<reference>}". A template such as
// "${NOMAD_ALLOC_DIR}/data" therefore evaluates to exactly its own text, and
// a reference can flow through functions and collections like any string.
//
// The placeholder is built per expression from expr.Variables(), so it holds
// exactly the paths used (attr.kernel.name, attr.unique.hostname) and
// nothing else. The result must be wholly known: a reference used as both a
// value and an object (meta.a and meta.a.b) cannot be represented and is
// reported.
func evaluate(ctx *hcl.EvalContext, expr hcl.Expression, src sources) (cty.Value, hcl.Diagnostics) {
	runtime := runtimeRefs(ctx, expr, src)
	if len(runtime) > 0 {
		child := ctx.NewChild()
		child.Variables = make(map[string]cty.Value, len(runtime))
		for root, p := range runtime {
			child.Variables[root] = p.value()
		}
		ctx = child
	}

	val, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	if !val.IsWhollyKnown() {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Runtime value used at parse time",
			Detail: "This expression needs the value of a runtime reference (such as ${attr.*}, ${meta.*} or " +
				"${NOMAD_*}), which only the client knows. Runtime references can only be used as text, " +
				"and one reference cannot be used both as a value and as an object.",
			Subject:    expr.Range().Ptr(),
			Expression: expr,
		})
		return cty.DynamicVal, diags
	}
	return val, diags
}

// runtimeRefs builds a placeholder for every root that expr uses and ctx
// does not define.
func runtimeRefs(ctx *hcl.EvalContext, expr hcl.Expression, src sources) map[string]*placeholder {
	var roots map[string]*placeholder
	for _, tr := range expr.Variables() {
		root := tr.RootName()
		if defined(ctx, root) || reservedRoots[root] {
			continue
		}
		if roots == nil {
			roots = make(map[string]*placeholder)
		}
		p := roots[root]
		if p == nil {
			p = &placeholder{}
			roots[root] = p
		}
		p.add(tr[1:], referenceText(tr, src))
	}
	return roots
}

// reservedRoots are never runtime references: where they are not defined
// (in a variable's default, say), using them is an error.
var reservedRoots = map[string]bool{"var": true, "local": true}

func defined(ctx *hcl.EvalContext, name string) bool {
	for c := ctx; c != nil; c = c.Parent() {
		if _, ok := c.Variables[name]; ok {
			return true
		}
	}
	return false
}

// placeholder stands in for a runtime reference during evaluation: a node
// that is used as a value renders as its text, a node whose attributes are
// used becomes an object of them.
type placeholder struct {
	text     string
	children map[string]*placeholder
}

func (p *placeholder) add(steps hcl.Traversal, text string) {
	if len(steps) == 0 {
		p.text = text
		return
	}
	key, ok := stepKey(steps[0])
	if !ok {
		// A splat or other step we cannot follow: the prefix is the value.
		p.text = text
		return
	}
	if p.children == nil {
		p.children = make(map[string]*placeholder)
	}
	child := p.children[key]
	if child == nil {
		child = &placeholder{}
		p.children[key] = child
	}
	child.add(steps[1:], text)
}

func (p *placeholder) value() cty.Value {
	switch {
	case len(p.children) == 0:
		return cty.StringVal("${" + p.text + "}")
	case p.text != "":
		// Used both as a value and as an object: no value can be both.
		return cty.DynamicVal
	default:
		attrs := make(map[string]cty.Value, len(p.children))
		for k, c := range p.children {
			attrs[k] = c.value()
		}
		return cty.ObjectVal(attrs)
	}
}

// stepKey returns the attribute name a traversal step looks up. Numeric
// steps (attr.gpu.0.name) become string keys, which HCL accepts for objects.
func stepKey(step hcl.Traverser) (string, bool) {
	switch s := step.(type) {
	case hcl.TraverseAttr:
		return s.Name, true
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String {
			return s.Key.AsString(), true
		}
		if s.Key.Type() == cty.Number {
			return s.Key.AsBigFloat().Text('f', -1), true
		}
	}
	return "", false
}

// sources holds the bytes of parsed files by name, so that a runtime
// reference can be kept exactly as the user wrote it.
type sources map[string][]byte

// referenceText returns the text of a runtime reference: as written, when
// the source is at hand and reads back as the same traversal, else rebuilt
// from the traversal.
func referenceText(tr hcl.Traversal, s sources) string {
	rng := tr.SourceRange()
	if b, ok := s[rng.Filename]; ok && rng.CanSliceBytes(b) {
		text := strings.TrimSpace(string(rng.SliceBytes(b)))
		// Parsed as an expression, not with ParseTraversalAbs, which does
		// not know the legacy index form attr.gpu.0.name.
		expr, diags := hclsyntax.ParseExpression([]byte(text), "", hcl.InitialPos)
		if st, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && !diags.HasErrors() && sameTraversal(st.Traversal, tr) {
			return text
		}
	}
	return renderTraversal(tr)
}

func sameTraversal(a, b hcl.Traversal) bool {
	return slices.EqualFunc(a, b, func(x, y hcl.Traverser) bool {
		kx, okx := stepKeyOrRoot(x)
		ky, oky := stepKeyOrRoot(y)
		return okx && oky && kx == ky
	})
}

func stepKeyOrRoot(t hcl.Traverser) (string, bool) {
	if r, ok := t.(hcl.TraverseRoot); ok {
		return r.Name, true
	}
	return stepKey(t)
}

func renderTraversal(tr hcl.Traversal) string {
	var b strings.Builder
	for _, step := range tr {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			key, _ := stepKey(s)
			if s.Key.Type() == cty.String {
				b.WriteString(`["` + key + `"]`)
			} else {
				b.WriteString("[" + key + "]")
			}
		}
	}
	return b.String()
}

package jobspec

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// evaluateLocals evaluates the locals blocks and returns the object bound to
// "local". Locals may refer to each other in any order; they are evaluated
// in dependency order, and a cycle is reported with its path.
func evaluateLocals(content *hcl.BodyContent, ctx *hcl.EvalContext, src sources) (cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	defs := map[string]*hcl.Attribute{}
	var order []*hcl.Attribute
	for _, b := range content.Blocks {
		if b.Type != "locals" {
			continue
		}
		attrs, ds := b.Body.JustAttributes()
		diags = append(diags, ds...)
		for _, a := range sortedAttrs(attrs) {
			if prev, dup := defs[a.Name]; dup {
				diags = append(diags, newDiag(a.NameRange, "Duplicate local value",
					"The local value %q is already defined at %s.", a.Name, prev.NameRange))
				continue
			}
			defs[a.Name] = a
			order = append(order, a)
		}
	}

	l := &localEvaluator{ctx: ctx, src: src, defs: defs,
		values: map[string]cty.Value{}, state: map[string]evalState{}}
	for _, a := range order {
		l.eval(a.Name, nil)
	}
	diags = append(diags, l.diags...)
	return cty.ObjectVal(l.values), diags
}

type evalState int

const (
	unvisited evalState = iota
	visiting
	done
	failed
)

// localEvaluator evaluates locals depth first, dependencies before
// dependents.
type localEvaluator struct {
	ctx    *hcl.EvalContext
	src    sources
	defs   map[string]*hcl.Attribute
	values map[string]cty.Value
	state  map[string]evalState
	diags  hcl.Diagnostics
}

// eval evaluates the local name; path is the chain of locals that led here.
// It reports whether the local has a value.
func (l *localEvaluator) eval(name string, path []string) bool {
	switch l.state[name] {
	case done:
		return true
	case failed:
		return false
	case visiting:
		cycle := append(slices.Clone(path), name)
		for i, n := range cycle {
			cycle[i] = "local." + n
		}
		a := l.defs[name]
		l.diags = append(l.diags, newDiag(a.NameRange, "Circular reference between locals",
			"%s refers back to itself: %s.", "local."+name, strings.Join(cycle, " -> ")))
		return false
	}

	a := l.defs[name]
	l.state[name] = visiting
	for _, tr := range a.Expr.Variables() {
		if tr.RootName() != "local" || len(tr) < 2 {
			continue
		}
		step, ok := tr[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		if _, isLocal := l.defs[step.Name]; !isLocal {
			// Left to evaluation, which reports the unknown name.
			continue
		}
		if !l.eval(step.Name, append(path, name)) {
			l.state[name] = failed
			return false
		}
	}

	ctx := l.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{"local": cty.ObjectVal(l.values)}
	val, diags := evaluate(ctx, a.Expr, l.src)
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		l.state[name] = failed
		return false
	}
	l.values[name] = val
	l.state[name] = done
	return true
}

package jobspec

import (
	"cmp"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// operandShorthands are the arguments that name the operator themselves:
// `regexp = "^linux$"` means operator "regexp" with that value. Constraints
// accept all of them; affinities the ones that make sense for scoring.
var (
	constraintShorthands = []string{
		api.ConstraintVersion, api.ConstraintSemver, api.ConstraintRegex,
		api.ConstraintSetContains, api.ConstraintSetContainsAll, api.ConstraintSetContainsAny,
	}
	affinityShorthands = constraintShorthands
)

// target is what constraint and affinity blocks have in common: the
// attribute, operator and value, written out or through a shorthand.
type target struct {
	attribute, operator, value string
	shorthands                 map[string]*string
	// operatorAt is where the operator came from, to report conflicts.
	operatorAt map[string]hcl.Range
}

func newTarget(shorthands []string) *target {
	t := &target{shorthands: map[string]*string{}, operatorAt: map[string]hcl.Range{}}
	for _, s := range shorthands {
		t.shorthands[s] = new(string)
	}
	return t
}

func (t *target) attrs() attrSet {
	s := attrSet{
		"attribute": value(&t.attribute),
		"value":     value(&t.value),
		"operator":  t.recordOperator("operator", value(&t.operator)),
	}
	for name, dst := range t.shorthands {
		s[name] = t.recordOperator(name, value(dst))
	}
	return s
}

// recordOperator wraps f to remember which arguments chose an operator.
func (t *target) recordOperator(name string, f attrFunc) attrFunc {
	return func(d *decoder, a *hcl.Attribute) {
		t.operatorAt[name] = a.Range
		f(d, a)
	}
}

// resolve applies the shorthands. Two ways of choosing the operator in one
// block is an error: Nomad silently picks one, which hides typos.
func (t *target) resolve(d *decoder) (lTarget, operand, rTarget string) {
	lTarget, operand, rTarget = t.attribute, t.operator, t.value
	choosers := slices.SortedFunc(maps.Keys(t.operatorAt), func(a, b string) int {
		return cmp.Compare(t.operatorAt[a].Start.Byte, t.operatorAt[b].Start.Byte)
	})
	if len(choosers) > 1 {
		d.errorf(t.operatorAt[choosers[1]], "Conflicting operators",
			"Both %q and %q choose the operator; use only one of them.", choosers[0], choosers[1])
		return lTarget, operand, rTarget
	}
	if len(choosers) == 1 {
		if v, ok := t.shorthands[choosers[0]]; ok && *v != "" {
			operand, rTarget = choosers[0], *v
		}
	}
	return lTarget, operand, rTarget
}

// constraint decodes a constraint block, including the shorthands
// distinct_hosts = true and distinct_property = "<attribute>".
func (d *decoder) constraint(body hcl.Body) *api.Constraint {
	t := newTarget(constraintShorthands)
	var distinctHosts bool
	var distinctProperty string
	attrs := t.attrs()
	attrs[api.ConstraintDistinctHosts] = t.recordOperator(api.ConstraintDistinctHosts, value(&distinctHosts))
	attrs[api.ConstraintDistinctProperty] = t.recordOperator(api.ConstraintDistinctProperty, value(&distinctProperty))
	d.decodeBody(body, spec{attrs: attrs})

	c := &api.Constraint{}
	c.LTarget, c.Operand, c.RTarget = t.resolve(d)
	if distinctHosts {
		// The value is written too, as Nomad's parser does, so the job
		// reads the same through either API.
		c.Operand, c.RTarget = api.ConstraintDistinctHosts, "true"
	}
	if distinctProperty != "" {
		// The property is the left side; value, if set, is how many
		// allocations may share one value of it.
		c.Operand = api.ConstraintDistinctProperty
		c.LTarget = distinctProperty
	}
	if c.Operand == "" {
		c.Operand = "="
	}
	return c
}

// affinity decodes an affinity block.
func (d *decoder) affinity(body hcl.Body) *api.Affinity {
	t := newTarget(affinityShorthands)
	a := &api.Affinity{}
	attrs := t.attrs()
	attrs["weight"] = pointer(&a.Weight)
	d.decodeBody(body, spec{attrs: attrs})

	a.LTarget, a.Operand, a.RTarget = t.resolve(d)
	if a.Operand == "" {
		a.Operand = "="
	}
	return a
}

// spread decodes a spread block and its target blocks, whose label is the
// attribute value they aim at.
func (d *decoder) spread(body hcl.Body) *api.Spread {
	s := &api.Spread{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"attribute": value(&s.Attribute),
			"weight":    pointer(&s.Weight),
		},
		blocks: blockSet{
			"target": labeled(func(d *decoder, b *hcl.Block) {
				t := &api.SpreadTarget{Value: b.Labels[0]}
				d.decodeBody(b.Body, spec{attrs: attrSet{"percent": value(&t.Percent)}})
				s.SpreadTarget = append(s.SpreadTarget, t)
			}, "value"),
		},
	})
	return s
}

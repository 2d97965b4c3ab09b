package structs

import (
	"fmt"
	"regexp"
	"strconv"
)

// Constraint operators, spelled as in jobspecs.
const (
	ConstraintDistinctHosts    = "distinct_hosts"
	ConstraintDistinctProperty = "distinct_property"
	ConstraintRegex            = "regexp"
	ConstraintVersion          = "version"
	ConstraintSemver           = "semver"
	ConstraintSetContains      = "set_contains"
	ConstraintSetContainsAll   = "set_contains_all"
	ConstraintSetContainsAny   = "set_contains_any"
	ConstraintAttributeIsSet   = "is_set"
	ConstraintAttributeNotSet  = "is_not_set"
)

// Constraint restricts which nodes may run a job, group or task:
// LTarget Operand RTarget, e.g. ${attr.kernel.name} = linux.
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

// String renders the constraint the way placement metrics name it.
func (c *Constraint) String() string {
	return fmt.Sprintf("%s %s %s", c.LTarget, c.Operand, c.RTarget)
}

// Copy returns a copy.
func (c *Constraint) Copy() *Constraint {
	return copyPtr(c)
}

// Canonicalize defaults the operand to equality.
func (c *Constraint) Canonicalize() {
	if c.Operand == "" {
		c.Operand = "="
	}
}

func (c *Constraint) validate(p problems) {
	switch c.Operand {
	case "=", "==", "is", "!=", "not", "<", "<=", ">", ">=":
		if c.LTarget == "" || c.RTarget == "" {
			p.add("operator %q needs both attribute and value", c.Operand)
		}
	case ConstraintRegex:
		if _, err := regexp.Compile(c.RTarget); err != nil {
			p.add("regexp %q does not compile: %v", c.RTarget, err)
		}
	case ConstraintVersion, ConstraintSemver:
		if c.RTarget == "" {
			p.add("operator %q needs a version constraint as value", c.Operand)
		} else if _, err := ParseVersionConstraint(c.RTarget, c.Operand == ConstraintSemver); err != nil {
			p.add("operator %q: %v", c.Operand, err)
		}
	case ConstraintSetContains, ConstraintSetContainsAll, ConstraintSetContainsAny:
		if c.RTarget == "" {
			p.add("operator %q needs a comma-separated value", c.Operand)
		}
	case ConstraintAttributeIsSet, ConstraintAttributeNotSet:
		if c.LTarget == "" {
			p.add("operator %q needs an attribute", c.Operand)
		}
	case ConstraintDistinctHosts:
		if c.RTarget != "" {
			if _, err := strconv.ParseBool(c.RTarget); err != nil {
				p.add("distinct_hosts value %q must be true or false", c.RTarget)
			}
		}
	case ConstraintDistinctProperty:
		if c.LTarget == "" {
			p.add("distinct_property needs an attribute")
		}
		if c.RTarget != "" {
			if n, err := strconv.Atoi(c.RTarget); err != nil || n < 1 {
				p.add("distinct_property limit %q must be a positive integer", c.RTarget)
			}
		}
	default:
		p.add("unknown operator %q (want one of =, !=, <, <=, >, >=, regexp, version, semver, set_contains, set_contains_any, is_set, is_not_set, distinct_hosts, distinct_property)", c.Operand)
	}
}

// Affinity is a soft constraint: nodes that match gain (or, with a negative
// weight, lose) score in proportion to Weight (-100..100).
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  int8
}

// String renders the affinity for metrics.
func (a *Affinity) String() string {
	return fmt.Sprintf("%s %s %s %d", a.LTarget, a.Operand, a.RTarget, a.Weight)
}

// Copy returns a copy.
func (a *Affinity) Copy() *Affinity {
	return copyPtr(a)
}

func (a *Affinity) validate(p problems) {
	if a.Weight == 0 || a.Weight > 100 || a.Weight < -100 {
		p.add("weight %d must be non-zero and between -100 and 100", a.Weight)
	}
	c := Constraint{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand}
	switch a.Operand {
	case ConstraintDistinctHosts, ConstraintDistinctProperty:
		p.add("operator %q is not allowed in an affinity", a.Operand)
		return
	}
	c.validate(p)
}

// Spread asks the scheduler to spread allocations over the values of a node
// attribute, optionally with target percentages per value.
type Spread struct {
	Attribute    string
	Weight       int8
	SpreadTarget []*SpreadTarget
}

// SpreadTarget is a desired share of allocations for one attribute value.
type SpreadTarget struct {
	Value   string
	Percent uint8
}

// Copy returns a deep copy.
func (s *Spread) Copy() *Spread {
	if s == nil {
		return nil
	}
	c := *s
	c.SpreadTarget = make([]*SpreadTarget, len(s.SpreadTarget))
	for i, t := range s.SpreadTarget {
		tc := *t
		c.SpreadTarget[i] = &tc
	}
	return &c
}

func (s *Spread) validate(p problems) {
	if s.Attribute == "" {
		p.add("spread needs an attribute")
	}
	if s.Weight <= 0 || s.Weight > 100 {
		p.add("spread weight %d must be between 1 and 100", s.Weight)
	}
	sum := 0
	seen := map[string]bool{}
	for _, t := range s.SpreadTarget {
		if seen[t.Value] {
			p.add("spread target %q is listed twice", t.Value)
		}
		seen[t.Value] = true
		sum += int(t.Percent)
	}
	if sum > 100 {
		p.add("spread target percentages add up to %d, more than 100", sum)
	}
}

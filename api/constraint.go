package api

// Constraint operands beyond the comparison operators (=, !=, <, <=, >, >=).
const (
	ConstraintDistinctProperty  = "distinct_property"
	ConstraintDistinctHosts     = "distinct_hosts"
	ConstraintRegex             = "regexp"
	ConstraintVersion           = "version"
	ConstraintSemver            = "semver"
	ConstraintSetContains       = "set_contains"
	ConstraintSetContainsAll    = "set_contains_all"
	ConstraintSetContainsAny    = "set_contains_any"
	ConstraintAttributeIsSet    = "is_set"
	ConstraintAttributeIsNotSet = "is_not_set"
)

// Constraint filters nodes: a node is feasible only if
// "LTarget Operand RTarget" holds for it. The targets are usually
// interpolations such as ${attr.kernel.name}, resolved per node.
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

// NewConstraint returns the constraint "left operand right".
func NewConstraint(left, operand, right string) *Constraint {
	return &Constraint{LTarget: left, RTarget: right, Operand: operand}
}

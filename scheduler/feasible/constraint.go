package feasible

import (
	"strconv"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// meetsConstraint reports whether node satisfies one constraint. Both sides
// are interpolated against the node, so the right side may itself be a
// target such as ${meta.rack}. distinct_hosts and distinct_property are not
// node properties and are checked by their own checkers (distinct.go); here
// they always pass.
func meetsConstraint(ctx *EvalContext, c *structs.Constraint, node *structs.Node) bool {
	lVal, lFound := resolveTarget(c.LTarget, node)
	rVal, rFound := resolveTarget(c.RTarget, node)
	return checkOperand(ctx, c.Operand, lVal, lFound, rVal, rFound)
}

// checkOperand applies one operator. A missing left value fails every
// operator except the negative ones (!=, not, is_not_set), which a node
// without the attribute satisfies.
func checkOperand(ctx *EvalContext, op, lVal string, lFound bool, rVal string, rFound bool) bool {
	switch op {
	case "=", "==", "is", "":
		return lFound && rFound && lVal == rVal
	case "!=", "not":
		return !(lFound && rFound && lVal == rVal)
	case "<", "<=", ">", ">=":
		return lFound && rFound && compareOrdered(op, lVal, rVal)
	case structs.ConstraintRegex:
		if !lFound || !rFound {
			return false
		}
		re := ctx.regexp(rVal)
		return re != nil && re.MatchString(lVal)
	case structs.ConstraintVersion, structs.ConstraintSemver:
		if !lFound || !rFound {
			return false
		}
		vc := ctx.versionConstraint(rVal, op == structs.ConstraintSemver)
		if vc == nil {
			return false
		}
		v, err := structs.ParseVersion(lVal)
		if err != nil {
			return false
		}
		if op == structs.ConstraintSemver && v.Prerelease != "" && !constraintNamesPrerelease(rVal) {
			// Semver: a prerelease only satisfies a constraint that
			// names a prerelease itself.
			return false
		}
		return vc.Check(v)
	case structs.ConstraintSetContains, structs.ConstraintSetContainsAll:
		return lFound && rFound && setContains(lVal, rVal, true)
	case structs.ConstraintSetContainsAny:
		return lFound && rFound && setContains(lVal, rVal, false)
	case structs.ConstraintAttributeIsSet:
		return lFound
	case structs.ConstraintAttributeNotSet:
		return !lFound
	case structs.ConstraintDistinctHosts, structs.ConstraintDistinctProperty:
		return true
	}
	return false
}

// compareOrdered compares numerically when both sides parse as numbers and
// lexically otherwise, so "10" > "9" but "b" > "a".
func compareOrdered(op, l, r string) bool {
	var cmp int
	lf, lerr := strconv.ParseFloat(strings.TrimSpace(l), 64)
	rf, rerr := strconv.ParseFloat(strings.TrimSpace(r), 64)
	if lerr == nil && rerr == nil {
		switch {
		case lf < rf:
			cmp = -1
		case lf > rf:
			cmp = 1
		}
	} else {
		cmp = strings.Compare(l, r)
	}
	switch op {
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}

// setContains treats both sides as comma-separated sets: with all, every
// element of want must be in have; otherwise at least one.
func setContains(have, want string, all bool) bool {
	set := map[string]struct{}{}
	for _, h := range strings.Split(have, ",") {
		set[strings.TrimSpace(h)] = struct{}{}
	}
	for _, w := range strings.Split(want, ",") {
		_, ok := set[strings.TrimSpace(w)]
		if all && !ok {
			return false
		}
		if !all && ok {
			return true
		}
	}
	return all
}

func constraintNamesPrerelease(s string) bool {
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimLeft(strings.TrimSpace(part), "~<>=! ")
		part, _, _ = strings.Cut(part, "+")
		if strings.Contains(part, "-") {
			return true
		}
	}
	return false
}

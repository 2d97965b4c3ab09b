package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a parsed dotted version such as 1.2.3-beta.1.
type Version struct {
	Segments   []int64
	Prerelease string
}

// ParseVersion parses "v1.2.3", "1.2", "1.2.3-rc1" and "1.2.3+meta".
func ParseVersion(s string) (Version, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	var v Version
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.Prerelease = s[i+1:]
		s = s[:i]
	}
	if s == "" {
		return v, fmt.Errorf("version %q is empty", s)
	}
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < 0 {
			return v, fmt.Errorf("version segment %q is not a number", part)
		}
		v.Segments = append(v.Segments, n)
	}
	return v, nil
}

// Compare returns -1, 0 or 1. Missing segments count as zero; a prerelease
// sorts before its release.
func (v Version) Compare(o Version) int {
	n := max(len(v.Segments), len(o.Segments))
	for i := 0; i < n; i++ {
		var a, b int64
		if i < len(v.Segments) {
			a = v.Segments[i]
		}
		if i < len(o.Segments) {
			b = o.Segments[i]
		}
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.Prerelease == o.Prerelease:
		return 0
	case v.Prerelease == "":
		return 1
	case o.Prerelease == "":
		return -1
	case v.Prerelease < o.Prerelease:
		return -1
	}
	return 1
}

// VersionConstraint is a conjunction such as ">= 1.2, < 2.0" or "~> 1.4".
type VersionConstraint []versionTerm

type versionTerm struct {
	op string
	v  Version
}

// ParseVersionConstraint parses a comma-separated list of terms. With strict
// (semver) a prerelease version only matches terms that name a prerelease.
func ParseVersionConstraint(s string, strict bool) (VersionConstraint, error) {
	var out VersionConstraint
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		op := "="
		for _, cand := range []string{"~>", ">=", "<=", "!=", ">", "<", "="} {
			if strings.HasPrefix(part, cand) {
				op = cand
				part = strings.TrimSpace(part[len(cand):])
				break
			}
		}
		v, err := ParseVersion(part)
		if err != nil {
			return nil, fmt.Errorf("constraint %q: %v", s, err)
		}
		out = append(out, versionTerm{op: op, v: v})
	}
	_ = strict
	return out, nil
}

// Check reports whether v satisfies every term.
func (c VersionConstraint) Check(v Version) bool {
	for _, t := range c {
		cmp := v.Compare(t.v)
		ok := false
		switch t.op {
		case "=":
			ok = cmp == 0
		case "!=":
			ok = cmp != 0
		case ">":
			ok = cmp > 0
		case ">=":
			ok = cmp >= 0
		case "<":
			ok = cmp < 0
		case "<=":
			ok = cmp <= 0
		case "~>":
			// Pessimistic: at least t.v, and the leading segments (all but
			// the last given one) unchanged: "~> 1.4" is >= 1.4, < 2.0.
			ok = cmp >= 0
			prefix := max(1, len(t.v.Segments)-1)
			for i := 0; ok && i < prefix; i++ {
				var got int64
				if i < len(v.Segments) {
					got = v.Segments[i]
				}
				ok = got == t.v.Segments[i]
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

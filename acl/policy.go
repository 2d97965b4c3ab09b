package acl

import (
	"fmt"
	"regexp"
	"strings"
)

// Bounds on a policy's rules, checked before anything is parsed. A
// policy is written by an operator and read by every server on every
// token resolution, so it must never be able to make a server hold much
// memory or recurse deeply. Real policies are a few hundred bytes with a
// handful of blocks nested three deep.
const (
	// MaxRulesSize is the largest rules text accepted, in bytes.
	MaxRulesSize = 32 * 1024
	// MaxBlocks bounds the rule blocks of one policy, counting namespace,
	// node_pool and host_volume blocks and variables paths.
	MaxBlocks = 256
	// MaxNestingDepth bounds how deeply braces, brackets and parentheses
	// may nest in the rules text.
	MaxNestingDepth = 32
)

// Policy is one parsed policy: its rule blocks, with every `policy`
// shorthand already expanded into capabilities. Capabilities lists are in
// a fixed order (the order of the capability constants) without
// duplicates, so two policies granting the same thing compare equal.
type Policy struct {
	Namespaces  []*NamespaceRule
	NodePools   []*NamedRule
	HostVolumes []*NamedRule

	Agent    *Rule
	Node     *Rule
	Operator *Rule
	Quota    *Rule
	Plugin   *Rule
}

// Rule is a block without a label: node, agent, operator, quota, plugin.
// Only operator has capabilities (snapshot-save, license-read).
type Rule struct {
	Policy       string
	Capabilities []string `json:",omitempty"`

	caps capSet
}

// NamedRule is a labelled block other than namespace: node_pool or
// host_volume. Name may be a glob.
type NamedRule struct {
	Name         string
	Policy       string
	Capabilities []string

	caps capSet
}

// NamespaceRule is a namespace block. Name is a namespace or a glob over
// namespaces ("*", "prod-*").
type NamespaceRule struct {
	Name         string
	Policy       string
	Capabilities []string
	// Variables are the block's `variables { path "..." {} }` rules.
	// Drover has no variables; they are kept so a Nomad policy keeps its
	// meaning when read back.
	Variables []*VariablesPathRule `json:",omitempty"`

	caps capSet
}

// VariablesPathRule is one `path` of a namespace's variables block.
type VariablesPathRule struct {
	Path         string
	Capabilities []string
}

// Label syntax, as Nomad validates it.
var (
	validNamespaceGlob = regexp.MustCompile(`^[a-zA-Z0-9-*]{1,128}$`)
	validNodePoolGlob  = regexp.MustCompile(`^[a-zA-Z0-9-_*]{1,128}$`)
	validVolumeGlob    = regexp.MustCompile(`^[a-zA-Z0-9-*]{1,128}$`)
)

// ParseError lists every problem found in a policy's rules, each naming
// its line, block and value, so an operator fixes them all at once.
type ParseError struct {
	Problems []string
}

func (e *ParseError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems in the policy rules:\n  * %s", len(e.Problems), strings.Join(e.Problems, "\n  * "))
}

// Parse reads one policy's rules, in HCL or (when the text starts with
// '{') HCL's JSON form, and validates every block. A policy must have at
// least one block; a value that is not allowed, an unknown block or
// attribute, a label written twice, or rules past the bounds above are
// errors (a *ParseError).
func Parse(rules string) (*Policy, error) {
	if len(rules) > MaxRulesSize {
		return nil, &ParseError{Problems: []string{fmt.Sprintf(
			"the rules are %d bytes; a policy may hold at most %d bytes (%d KiB)", len(rules), MaxRulesSize, MaxRulesSize/1024)}}
	}
	if strings.TrimSpace(rules) == "" {
		return nil, &ParseError{Problems: []string{
			`the rules are empty: a policy needs at least one block, such as namespace "default" { policy = "read" }`}}
	}
	if line, depth := nestingDepth(rules); depth > MaxNestingDepth {
		return nil, &ParseError{Problems: []string{fmt.Sprintf(
			"line %d: the rules nest %d levels deep there; at most %d levels are allowed", line, depth, MaxNestingDepth)}}
	}
	d := &policyDecoder{}
	p := d.decode(rules)
	if len(d.problems) > 0 {
		return nil, &ParseError{Problems: d.problems}
	}
	return p, nil
}

// nestingDepth scans the text for the deepest nesting of (, [ and {,
// ignoring quoting: a real policy never comes close to the limit, so a
// brace inside a string can only make the count err on the safe side.
// It returns the first line where the depth went past MaxNestingDepth (or
// the deepest line) and that depth.
func nestingDepth(s string) (line, maxDepth int) {
	depth, ln := 0, 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			ln++
		case '(', '[', '{':
			depth++
			if depth > maxDepth {
				maxDepth, line = depth, ln
				if depth > MaxNestingDepth {
					return line, depth
				}
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return line, maxDepth
}

// IsEmpty reports whether the policy has no block at all.
func (p *Policy) IsEmpty() bool {
	return len(p.Namespaces) == 0 && len(p.NodePools) == 0 && len(p.HostVolumes) == 0 &&
		p.Agent == nil && p.Node == nil && p.Operator == nil && p.Quota == nil && p.Plugin == nil
}

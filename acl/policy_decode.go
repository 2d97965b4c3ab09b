package acl

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
)

// policyDecoder walks a parsed policy, collecting every problem (with its
// line) rather than stopping at the first.
type policyDecoder struct {
	problems []string
	blocks   int
	// seen remembers the line of each labelled block and singleton, to
	// name both places when one is written twice.
	seen map[string]int
}

var policySchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "namespace", LabelNames: []string{"name"}},
	{Type: "node_pool", LabelNames: []string{"name"}},
	{Type: "host_volume", LabelNames: []string{"name"}},
	{Type: "agent"},
	{Type: "node"},
	{Type: "operator"},
	{Type: "quota"},
	{Type: "plugin"},
}}

func (d *policyDecoder) problem(r hcl.Range, where, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	d.problems = append(d.problems, fmt.Sprintf("line %d: %s", r.Start.Line, msg))
}

func (d *policyDecoder) diags(diags hcl.Diagnostics) { d.diagsIn("", diags) }

// diagsIn records HCL's errors about the inside of the block named where.
func (d *policyDecoder) diagsIn(where string, diags hcl.Diagnostics) {
	for _, diag := range diags {
		if diag.Severity != hcl.DiagError {
			continue
		}
		msg := diag.Summary
		if diag.Detail != "" {
			msg += ": " + diag.Detail
		}
		if where != "" {
			msg = where + ": " + msg
		}
		line := 0
		if diag.Subject != nil {
			line = diag.Subject.Start.Line
		}
		d.problems = append(d.problems, fmt.Sprintf("line %d: %s", line, msg))
	}
}

// countBlock counts a block against MaxBlocks and reports whether there is
// still room for it.
func (d *policyDecoder) countBlock(r hcl.Range) bool {
	d.blocks++
	if d.blocks == MaxBlocks+1 {
		d.problem(r, "", "a policy may have at most %d rule blocks (namespace, node_pool, host_volume and variables paths together)", MaxBlocks)
	}
	return d.blocks <= MaxBlocks
}

// once reports whether key is seen for the first time, and otherwise
// records a problem naming both lines.
func (d *policyDecoder) once(key, where string, r hcl.Range) bool {
	if d.seen == nil {
		d.seen = map[string]int{}
	}
	if first, dup := d.seen[key]; dup {
		d.problem(r, where, "written twice (first on line %d); merge the two blocks into one", first)
		return false
	}
	d.seen[key] = r.Start.Line
	return true
}

func (d *policyDecoder) decode(rules string) *Policy {
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.HasPrefix(strings.TrimSpace(rules), "{") {
		file, diags = hcljson.Parse([]byte(rules), "policy")
	} else {
		file, diags = hclsyntax.ParseConfig([]byte(rules), "policy", hcl.InitialPos)
	}
	d.diags(diags)
	if file == nil || diags.HasErrors() {
		return nil
	}
	content, diags := file.Body.Content(policySchema)
	d.diags(diags)
	if content == nil {
		return nil
	}
	p := &Policy{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "namespace":
			if r := d.namespace(b); r != nil {
				p.Namespaces = append(p.Namespaces, r)
			}
		case "node_pool":
			if r := d.named(b, validNodePoolGlob, "letters, digits, '-', '_' and '*'", nodePoolCaps, nodePoolPolicyCaps); r != nil {
				p.NodePools = append(p.NodePools, r)
			}
		case "host_volume":
			if r := d.named(b, validVolumeGlob, "letters, digits, '-' and '*'", hostVolumeCaps, hostVolumePolicyCaps); r != nil {
				p.HostVolumes = append(p.HostVolumes, r)
			}
		case "agent":
			p.Agent = d.coarse(b, coarsePolicies, nil, nil)
		case "node":
			p.Node = d.coarse(b, coarsePolicies, nil, nil)
		case "operator":
			p.Operator = d.coarse(b, coarsePolicies, operatorCaps, operatorPolicyCaps)
		case "quota":
			p.Quota = d.coarse(b, coarsePolicies, nil, nil)
		case "plugin":
			p.Plugin = d.coarse(b, pluginPolicies, nil, nil)
		}
	}
	if len(d.problems) == 0 && p.IsEmpty() {
		d.problems = append(d.problems, `the rules have no blocks: a policy needs at least one, such as namespace "default" { policy = "read" }`)
	}
	return p
}

// ruleSchema is the body of every rule block; namespace blocks may also
// hold one variables block.
var (
	ruleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "policy"}, {Name: "capabilities"}}}
	nsSchema   = &hcl.BodySchema{
		Attributes: ruleSchema.Attributes,
		Blocks:     []hcl.BlockHeaderSchema{{Type: "variables"}},
	}
	coarseSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "policy", Required: true}}}
	varsSchema   = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "path", LabelNames: []string{"path"}}}}
	pathSchema   = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "capabilities", Required: true}}}
)

func (d *policyDecoder) namespace(b *hcl.Block) *NamespaceRule {
	name, where, content := d.labelled(b, validNamespaceGlob, "letters, digits, '-' and '*'", nsSchema)
	if content == nil {
		return nil
	}
	r := &NamespaceRule{Name: name}
	var explicit capSet
	r.Policy, explicit = d.policyAndCaps(content.Attributes, where, namespacePolicies, namespaceCaps)
	r.caps = impliedNamespaceCaps(explicit | namespacePolicyCaps(r.Policy))
	for i, vb := range content.Blocks {
		if i > 0 {
			d.problem(vb.DefRange, where, "has more than one variables block; list every path in one")
			continue
		}
		r.Variables = d.variables(vb, where)
	}
	if r.caps == 0 && len(r.Variables) == 0 && content.Attributes["policy"] == nil && content.Attributes["capabilities"] == nil {
		d.problem(b.DefRange, where, "grants nothing: set policy (%s) or capabilities", strings.Join(namespacePolicies, ", "))
	}
	r.caps, r.Capabilities = granted(r.caps, namespaceCaps)
	return r
}

func (d *policyDecoder) variables(b *hcl.Block, where string) []*VariablesPathRule {
	where += " variables"
	content, diags := b.Body.Content(varsSchema)
	d.diagsIn(where, diags)
	if content == nil {
		return nil
	}
	if len(content.Blocks) == 0 {
		d.problem(b.DefRange, where, `has no path; add one such as path "project/*" { capabilities = ["read"] }`)
	}
	var out []*VariablesPathRule
	for _, pb := range content.Blocks {
		path := pb.Labels[0]
		pwhere := fmt.Sprintf("%s path %q", where, path)
		if !d.countBlock(pb.DefRange) {
			return out
		}
		switch {
		case path == "":
			d.problem(pb.LabelRanges[0], where, "a path must not be empty")
			continue
		case strings.HasPrefix(path, "/"):
			d.problem(pb.LabelRanges[0], pwhere, "must not start with '/'")
			continue
		}
		if !d.once(where+"\x00"+path, pwhere, pb.DefRange) {
			continue
		}
		pc, diags := pb.Body.Content(pathSchema)
		d.diagsIn(pwhere, diags)
		if pc == nil {
			continue
		}
		caps := variablesPathCaps(d.capabilities(pc.Attributes["capabilities"], pwhere, variablesCaps))
		out = append(out, &VariablesPathRule{Path: path, Capabilities: variablesCaps.list(caps)})
	}
	return out
}

// labelled starts a namespace, node_pool or host_volume block: it counts
// the block, checks its name against valid (syntax says what valid
// accepts) and that no other block of its kind has the name, and decodes
// its body with schema. The content is nil when the block is to be left
// out; the problem is recorded.
func (d *policyDecoder) labelled(b *hcl.Block, valid *regexp.Regexp, syntax string, schema *hcl.BodySchema) (name, where string, content *hcl.BodyContent) {
	name = b.Labels[0]
	where = fmt.Sprintf("%s %q", b.Type, name)
	if !d.countBlock(b.DefRange) {
		return name, where, nil
	}
	if !valid.MatchString(name) {
		d.problem(b.LabelRanges[0], "", "%s name %q is not valid: use 1 to 128 %s", b.Type, name, syntax)
		return name, where, nil
	}
	if !d.once(b.Type+"\x00"+name, where, b.DefRange) {
		return name, where, nil
	}
	content, diags := b.Body.Content(schema)
	d.diagsIn(where, diags)
	return name, where, content
}

// granted is a rule's capabilities as it keeps and lists them: deny
// alone when it denies.
func granted(caps capSet, table *capTable) (capSet, []string) {
	if caps.denies() {
		caps = denyBit
	}
	return caps, table.list(caps)
}

// named decodes a node_pool or host_volume block.
func (d *policyDecoder) named(b *hcl.Block, valid *regexp.Regexp, syntax string, table *capTable, expand func(string) capSet) *NamedRule {
	name, where, content := d.labelled(b, valid, syntax, ruleSchema)
	if content == nil {
		return nil
	}
	r := &NamedRule{Name: name}
	var explicit capSet
	r.Policy, explicit = d.policyAndCaps(content.Attributes, where, coarsePolicies, table)
	r.caps = explicit | expand(r.Policy)
	if content.Attributes["policy"] == nil && content.Attributes["capabilities"] == nil {
		d.problem(b.DefRange, where, "grants nothing: set policy (%s) or capabilities", strings.Join(coarsePolicies, ", "))
	}
	r.caps, r.Capabilities = granted(r.caps, table)
	return r
}

// coarse decodes a block that has a policy and, for operator only,
// capabilities.
func (d *policyDecoder) coarse(b *hcl.Block, allowed []string, table *capTable, expand func(string) capSet) *Rule {
	where := b.Type
	if !d.once(b.Type, where, b.DefRange) {
		return nil
	}
	schema := coarseSchema
	if table != nil {
		schema = ruleSchema
	}
	content, diags := b.Body.Content(schema)
	d.diagsIn(where, diags)
	if content == nil {
		return nil
	}
	r := &Rule{}
	if table == nil {
		r.Policy = d.policy(content.Attributes["policy"], where, allowed)
		return r
	}
	var explicit capSet
	r.Policy, explicit = d.policyAndCaps(content.Attributes, where, allowed, table)
	if content.Attributes["policy"] == nil && content.Attributes["capabilities"] == nil {
		d.problem(b.DefRange, where, "grants nothing: set policy (%s) or capabilities", strings.Join(allowed, ", "))
	}
	r.caps = explicit | expand(r.Policy)
	r.caps, r.Capabilities = granted(r.caps, table)
	return r
}

func (d *policyDecoder) policyAndCaps(attrs hcl.Attributes, where string, allowed []string, table *capTable) (string, capSet) {
	policy := d.policy(attrs["policy"], where, allowed)
	return policy, d.capabilities(attrs["capabilities"], where, table)
}

// policy reads a `policy` attribute, which must be one of allowed.
func (d *policyDecoder) policy(a *hcl.Attribute, where string, allowed []string) string {
	if a == nil {
		return ""
	}
	v, ok := d.literal(a, where, "policy")
	if !ok {
		return ""
	}
	if v.Type() != cty.String {
		d.problem(a.Expr.Range(), where, "policy must be a string, one of %s; got a %s", strings.Join(allowed, ", "), v.Type().FriendlyName())
		return ""
	}
	s := v.AsString()
	for _, p := range allowed {
		if s == p {
			return s
		}
	}
	d.problem(a.Expr.Range(), where, "policy %q is not valid; allowed: %s", s, strings.Join(allowed, ", "))
	return ""
}

// capabilities reads a `capabilities` list, each of which must be in table.
func (d *policyDecoder) capabilities(a *hcl.Attribute, where string, table *capTable) capSet {
	if a == nil {
		return 0
	}
	v, ok := d.literal(a, where, "capabilities")
	if !ok {
		return 0
	}
	t := v.Type()
	if !t.IsTupleType() && !t.IsListType() && !t.IsSetType() {
		d.problem(a.Expr.Range(), where, "capabilities must be a list of strings such as [%q]; got a %s", table.names[1], t.FriendlyName())
		return 0
	}
	var c capSet
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() || ev.Type() != cty.String {
			d.problem(a.Expr.Range(), where, "capabilities must be a list of strings; it holds a %s", ev.Type().FriendlyName())
			continue
		}
		name := ev.AsString()
		b, ok := table.bits[name]
		if !ok {
			d.problem(a.Expr.Range(), where, "capability %q is not valid for a %s block; allowed: %s", name, table.kind, table.allowed())
			continue
		}
		c |= b
	}
	return c
}

// literal evaluates an attribute that must be a constant: policies have no
// variables and no functions.
func (d *policyDecoder) literal(a *hcl.Attribute, where, name string) (cty.Value, bool) {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		for _, diag := range diags {
			d.problem(a.Expr.Range(), where, "%s must be a literal value: %s", name, diag.Summary)
		}
		return cty.NilVal, false
	}
	if v.IsNull() || !v.IsWhollyKnown() {
		d.problem(a.Expr.Range(), where, "%s must not be null", name)
		return cty.NilVal, false
	}
	return v, true
}

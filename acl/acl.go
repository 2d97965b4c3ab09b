package acl

import (
	"path"
	"sort"
	"strings"
)

// AllNamespaces is the namespace a request names to mean "every
// namespace" (?namespace=*). An operation on it is allowed if the ACL
// allows it in at least one namespace; the endpoint then filters what it
// answers namespace by namespace.
const AllNamespaces = "*"

// ACL is the compiled form of a token's policies: what the token may do.
// It is immutable and safe for concurrent use. A nil *ACL means ACLs are
// disabled and allows everything.
type ACL struct {
	management bool

	namespaces  ruleSet
	nodePools   ruleSet
	hostVolumes ruleSet

	agent    string
	node     string
	operator string
	quota    string
	plugin   string

	operatorCaps capSet
}

// ruleSet holds the merged rules for one kind of labelled block: exact
// names in a map, globs in a slice sorted by pattern, so that matching is
// deterministic and two ACLs built from the same policies are equal.
type ruleSet struct {
	exact map[string]capSet
	globs []globRule
}

type globRule struct {
	pattern string
	caps    capSet
}

// ManagementACL allows everything. Management tokens resolve to it.
var ManagementACL = &ACL{management: true}

// NewACL compiles policies into one ACL (see the package documentation for
// how rules merge). With management set, the policies are ignored and the
// result allows everything. Any number of policies, including none, is
// fine: no policy allows nothing.
func NewACL(management bool, policies []*Policy) *ACL {
	if management {
		return ManagementACL
	}
	a := &ACL{}
	ns := map[string]capSet{}
	np := map[string]capSet{}
	hv := map[string]capSet{}
	for _, p := range policies {
		if p == nil {
			continue
		}
		for _, r := range p.Namespaces {
			ns[r.Name] = mergeRule(ns, r.Name, r.caps)
		}
		for _, r := range p.NodePools {
			np[r.Name] = mergeRule(np, r.Name, r.caps)
		}
		for _, r := range p.HostVolumes {
			hv[r.Name] = mergeRule(hv, r.Name, r.caps)
		}
		if p.Agent != nil {
			a.agent = maxPrivilege(a.agent, p.Agent.Policy)
		}
		if p.Node != nil {
			a.node = maxPrivilege(a.node, p.Node.Policy)
		}
		if p.Operator != nil {
			a.operator = maxPrivilege(a.operator, p.Operator.Policy)
			a.operatorCaps = a.operatorCaps.merge(p.Operator.caps)
		}
		if p.Quota != nil {
			a.quota = maxPrivilege(a.quota, p.Quota.Policy)
		}
		if p.Plugin != nil {
			a.plugin = maxPrivilege(a.plugin, p.Plugin.Policy)
		}
	}
	a.namespaces = newRuleSet(ns)
	a.nodePools = newRuleSet(np)
	a.hostVolumes = newRuleSet(hv)
	return a
}

// Compile parses each policy's rules and compiles them, for callers that
// hold the rules text (a client agent checking a token it resolved).
func Compile(management bool, rules ...string) (*ACL, error) {
	if management {
		return ManagementACL, nil
	}
	policies := make([]*Policy, 0, len(rules))
	for _, r := range rules {
		p, err := Parse(r)
		if err != nil {
			return nil, err
		}
		policies = append(policies, p)
	}
	return NewACL(false, policies), nil
}

func mergeRule(m map[string]capSet, name string, c capSet) capSet {
	if cur, ok := m[name]; ok {
		return cur.merge(c)
	}
	if c.denies() {
		return denyBit
	}
	return c
}

func newRuleSet(all map[string]capSet) ruleSet {
	rs := ruleSet{exact: map[string]capSet{}}
	for name, c := range all {
		if strings.Contains(name, "*") {
			rs.globs = append(rs.globs, globRule{pattern: name, caps: c})
		} else {
			rs.exact[name] = c
		}
	}
	sort.Slice(rs.globs, func(i, j int) bool { return rs.globs[i].pattern < rs.globs[j].pattern })
	return rs
}

// match returns the capabilities that apply to name: its exact rule, else
// the closest matching glob. Closest means the fewest characters of name
// left to the glob's stars, as in Nomad (len(name) - len(glob) +
// stars); ties go to the lexically first glob.
func (rs *ruleSet) match(name string) (capSet, bool) {
	if c, ok := rs.exact[name]; ok {
		return c, true
	}
	best, found, bestDiff := capSet(0), false, 0
	for _, g := range rs.globs {
		if !globMatch(g.pattern, name) {
			continue
		}
		diff := len(name) - len(g.pattern) + strings.Count(g.pattern, "*")
		if !found || diff < bestDiff {
			best, found, bestDiff = g.caps, true, diff
		}
	}
	return best, found
}

// any reports whether any rule satisfies ok.
func (rs *ruleSet) any(ok func(capSet) bool) bool {
	for _, c := range rs.exact {
		if ok(c) {
			return true
		}
	}
	for _, g := range rs.globs {
		if ok(g.caps) {
			return true
		}
	}
	return false
}

// globMatch matches a name against a pattern whose only special character
// is '*' (any run of characters). Label syntax allows no other pattern
// character, and names never hold a '/', so path.Match is exactly that.
func globMatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// IsManagement reports whether the ACL is a management token's. A nil ACL
// (ACLs disabled) counts as management: it allows everything too.
func (a *ACL) IsManagement() bool { return a == nil || a.management }

// AllowNamespaceOperation reports whether op (a namespace capability such
// as "submit-job") is allowed in namespace ns. For AllNamespaces it is
// allowed if some namespace allows it. An unknown capability is never
// allowed.
func (a *ACL) AllowNamespaceOperation(ns, op string) bool {
	if a.IsManagement() {
		return true
	}
	bit, ok := namespaceCaps.bits[op]
	if !ok || bit == denyBit {
		return false
	}
	allows := func(c capSet) bool { return !c.denies() && c&bit != 0 }
	if ns == AllNamespaces && a.namespaces.any(allows) {
		return true
	}
	c, found := a.namespaces.match(ns)
	return found && allows(c)
}

// AllowNamespaceAny reports whether any of ops is allowed in ns, for an
// endpoint that accepts either a broad capability or its finer part
// (submit-job or register-job, say).
func (a *ACL) AllowNamespaceAny(ns string, ops ...string) bool {
	for _, op := range ops {
		if a.AllowNamespaceOperation(ns, op) {
			return true
		}
	}
	return a.IsManagement()
}

// AllowNamespace reports whether any operation at all is allowed in ns,
// for reads that only need to know the namespace is visible.
func (a *ACL) AllowNamespace(ns string) bool {
	if a.IsManagement() {
		return true
	}
	allows := func(c capSet) bool { return c != 0 && !c.denies() }
	if ns == AllNamespaces && a.namespaces.any(allows) {
		return true
	}
	c, found := a.namespaces.match(ns)
	return found && allows(c)
}

// AllowNodePoolOperation reports whether op (read, write, delete) is
// allowed on the node pool.
func (a *ACL) AllowNodePoolOperation(pool, op string) bool {
	if a.IsManagement() {
		return true
	}
	bit, ok := nodePoolCaps.bits[op]
	if !ok || bit == denyBit {
		return false
	}
	c, found := a.nodePools.match(pool)
	return found && !c.denies() && c&bit != 0
}

// AllowHostVolumeOperation reports whether op (mount-readonly,
// mount-readwrite) is allowed on the host volume.
func (a *ACL) AllowHostVolumeOperation(volume, op string) bool {
	if a.IsManagement() {
		return true
	}
	bit, ok := hostVolumeCaps.bits[op]
	if !ok || bit == denyBit {
		return false
	}
	c, found := a.hostVolumes.match(volume)
	return found && !c.denies() && c&bit != 0
}

func (a *ACL) coarse(policy string, write bool) bool {
	if a.IsManagement() {
		return true
	}
	if write {
		return policy == PolicyWrite
	}
	return policy == PolicyWrite || policy == PolicyRead
}

// AllowNodeRead reports whether nodes may be read.
func (a *ACL) AllowNodeRead() bool { return a.coarse(a.nodePolicy(), false) }

// AllowNodeWrite reports whether nodes may be changed (drain, eligibility).
func (a *ACL) AllowNodeWrite() bool { return a.coarse(a.nodePolicy(), true) }

// AllowAgentRead reports whether agent information may be read.
func (a *ACL) AllowAgentRead() bool { return a.coarse(a.agentPolicy(), false) }

// AllowAgentWrite reports whether agent-changing calls (join, ...) are allowed.
func (a *ACL) AllowAgentWrite() bool { return a.coarse(a.agentPolicy(), true) }

// AllowOperatorRead reports whether operator information (raft peers,
// scheduler configuration) may be read.
func (a *ACL) AllowOperatorRead() bool { return a.coarse(a.operatorPolicy(), false) }

// AllowOperatorWrite reports whether operator changes are allowed.
func (a *ACL) AllowOperatorWrite() bool { return a.coarse(a.operatorPolicy(), true) }

// AllowOperatorOperation reports whether an operator capability
// (snapshot-save, license-read) is allowed.
func (a *ACL) AllowOperatorOperation(op string) bool {
	if a.IsManagement() {
		return true
	}
	bit, ok := operatorCaps.bits[op]
	return ok && bit != denyBit && !a.operatorCaps.denies() && a.operatorCaps&bit != 0
}

// AllowQuotaRead and AllowQuotaWrite are the quota block's checks.
func (a *ACL) AllowQuotaRead() bool { return a.coarse(a.quotaPolicy(), false) }

// AllowQuotaWrite reports whether quotas may be changed.
func (a *ACL) AllowQuotaWrite() bool { return a.coarse(a.quotaPolicy(), true) }

// AllowPluginRead reports whether plugins may be read in detail.
func (a *ACL) AllowPluginRead() bool {
	if a.IsManagement() {
		return true
	}
	return a.plugin == PolicyRead || a.plugin == PolicyWrite
}

// AllowPluginList reports whether plugins may be listed.
func (a *ACL) AllowPluginList() bool {
	return a.AllowPluginRead() || a.plugin == PolicyList
}

// The policy accessors read a field of a possibly nil ACL; coarse answers
// for nil before they are consulted.
func (a *ACL) nodePolicy() string {
	if a == nil {
		return ""
	}
	return a.node
}

func (a *ACL) agentPolicy() string {
	if a == nil {
		return ""
	}
	return a.agent
}

func (a *ACL) operatorPolicy() string {
	if a == nil {
		return ""
	}
	return a.operator
}

func (a *ACL) quotaPolicy() string {
	if a == nil {
		return ""
	}
	return a.quota
}

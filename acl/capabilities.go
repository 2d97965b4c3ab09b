package acl

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
)

// Policy dispositions: the values of a rule's `policy` field. Which of them
// a block accepts differs (see the allowed* lists below).
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyList  = "list"
	PolicyWrite = "write"
	PolicyScale = "scale"
)

// Namespace capabilities, with Nomad's names. The enforcement layer asks
// for these with AllowNamespaceOperation.
const (
	NamespaceCapabilityDeny                 = "deny"
	NamespaceCapabilityListJobs             = "list-jobs"
	NamespaceCapabilityParseJob             = "parse-job"
	NamespaceCapabilityReadJob              = "read-job"
	NamespaceCapabilitySubmitJob            = "submit-job"
	NamespaceCapabilityDispatchJob          = "dispatch-job"
	NamespaceCapabilityReadLogs             = "read-logs"
	NamespaceCapabilityReadFS               = "read-fs"
	NamespaceCapabilityAllocExec            = "alloc-exec"
	NamespaceCapabilityAllocNodeExec        = "alloc-node-exec"
	NamespaceCapabilityAllocLifecycle       = "alloc-lifecycle"
	NamespaceCapabilitySentinelOverride     = "sentinel-override"
	NamespaceCapabilityCSIRegisterPlugin    = "csi-register-plugin"
	NamespaceCapabilityCSIWriteVolume       = "csi-write-volume"
	NamespaceCapabilityCSIReadVolume        = "csi-read-volume"
	NamespaceCapabilityCSIListVolume        = "csi-list-volume"
	NamespaceCapabilityCSIMountVolume       = "csi-mount-volume"
	NamespaceCapabilityHostVolumeCreate     = "host-volume-create"
	NamespaceCapabilityHostVolumeRegister   = "host-volume-register"
	NamespaceCapabilityHostVolumeRead       = "host-volume-read"
	NamespaceCapabilityHostVolumeWrite      = "host-volume-write"
	NamespaceCapabilityHostVolumeDelete     = "host-volume-delete"
	NamespaceCapabilityListScalingPolicies  = "list-scaling-policies"
	NamespaceCapabilityReadScalingPolicy    = "read-scaling-policy"
	NamespaceCapabilityReadJobScaling       = "read-job-scaling"
	NamespaceCapabilityScaleJob             = "scale-job"
	NamespaceCapabilitySubmitRecommendation = "submit-recommendation"

	// Finer-grained parts of submit-job, as newer Nomad versions have
	// them. A policy may grant one without submit-job; an endpoint that
	// needs one should accept either (see AllowNamespaceAny).
	NamespaceCapabilityRegisterJob               = "register-job"
	NamespaceCapabilityRevertJob                 = "revert-job"
	NamespaceCapabilityDeregisterJob             = "deregister-job"
	NamespaceCapabilityPurgeJob                  = "purge-job"
	NamespaceCapabilityEvaluateJob               = "evaluate-job"
	NamespaceCapabilityPlanJob                   = "plan-job"
	NamespaceCapabilityTagJobVersion             = "tag-job-version"
	NamespaceCapabilityStableJob                 = "stable-job"
	NamespaceCapabilityFailDeployment            = "fail-deployment"
	NamespaceCapabilityPauseDeployment           = "pause-deployment"
	NamespaceCapabilityPromoteDeployment         = "promote-deployment"
	NamespaceCapabilityUnblockDeployment         = "unblock-deployment"
	NamespaceCapabilityCancelDeployment          = "cancel-deployment"
	NamespaceCapabilitySetAllocHealthDeployment  = "set-alloc-health-deployment"
	NamespaceCapabilityGCAllocation              = "gc-allocation"
	NamespaceCapabilityPauseAllocation           = "pause-allocation"
	NamespaceCapabilityForcePeriodicJob          = "force-periodic-job"
	NamespaceCapabilityDeleteServiceRegistration = "delete-service-registration"
)

// Capabilities of the other blocks that have them.
const (
	NodePoolCapabilityDeny   = "deny"
	NodePoolCapabilityRead   = "read"
	NodePoolCapabilityWrite  = "write"
	NodePoolCapabilityDelete = "delete"

	HostVolumeCapabilityDeny           = "deny"
	HostVolumeCapabilityMountReadOnly  = "mount-readonly"
	HostVolumeCapabilityMountReadWrite = "mount-readwrite"

	OperatorCapabilityDeny         = "deny"
	OperatorCapabilitySnapshotSave = "snapshot-save"
	OperatorCapabilityLicenseRead  = "license-read"

	VariablesCapabilityDeny    = "deny"
	VariablesCapabilityList    = "list"
	VariablesCapabilityRead    = "read"
	VariablesCapabilityWrite   = "write"
	VariablesCapabilityDestroy = "destroy"
)

// capSet is a set of capabilities of one kind of block, one bit each, in
// the order of that kind's capTable. Bit 0 is always deny. A bit set makes
// merging a plain OR and comparing two sets an ==, which keeps compiled
// ACLs small and their evaluation allocation-free.
type capSet uint64

const denyBit capSet = 1

func (c capSet) denies() bool { return c&denyBit != 0 }

// merge adds o's capabilities to c, except that a deny on either side
// replaces everything with deny: deny always wins, whatever the order.
func (c capSet) merge(o capSet) capSet {
	if c.denies() || o.denies() {
		return denyBit
	}
	return c | o
}

// capTable names the capabilities of one kind of block.
type capTable struct {
	kind  string
	names []string
	bits  map[string]capSet
}

func newCapTable(kind string, names ...string) *capTable {
	if len(names) == 0 || names[0] != "deny" || len(names) > 64 {
		panic(fmt.Sprintf("acl: capability table %s must start with deny and hold at most 64 names", kind))
	}
	t := &capTable{kind: kind, names: names, bits: make(map[string]capSet, len(names))}
	for i, n := range names {
		if _, dup := t.bits[n]; dup {
			panic(fmt.Sprintf("acl: capability %q listed twice for %s", n, kind))
		}
		t.bits[n] = 1 << i
	}
	return t
}

// set returns the set holding the named capabilities; every name must be
// in the table (validation happens before).
func (t *capTable) set(names ...string) capSet {
	var c capSet
	for _, n := range names {
		b, ok := t.bits[n]
		if !ok {
			panic(fmt.Sprintf("acl: %s has no capability %q", t.kind, n))
		}
		c |= b
	}
	return c
}

// list names the capabilities of c, in table order.
func (t *capTable) list(c capSet) []string {
	out := make([]string, 0, bits.OnesCount64(uint64(c)))
	for i, n := range t.names {
		if c&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// allowed lists the names a user may write, sorted, for error messages.
func (t *capTable) allowed() string {
	s := append([]string(nil), t.names...)
	sort.Strings(s)
	return strings.Join(s, ", ")
}

var namespaceCaps = newCapTable("namespace",
	NamespaceCapabilityDeny,
	NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
	NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob, NamespaceCapabilityReadLogs,
	NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec, NamespaceCapabilityAllocNodeExec,
	NamespaceCapabilityAllocLifecycle, NamespaceCapabilitySentinelOverride,
	NamespaceCapabilityCSIRegisterPlugin, NamespaceCapabilityCSIWriteVolume,
	NamespaceCapabilityCSIReadVolume, NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIMountVolume,
	NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeRegister,
	NamespaceCapabilityHostVolumeRead, NamespaceCapabilityHostVolumeWrite, NamespaceCapabilityHostVolumeDelete,
	NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
	NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitRecommendation,
	NamespaceCapabilityRegisterJob, NamespaceCapabilityRevertJob, NamespaceCapabilityDeregisterJob,
	NamespaceCapabilityPurgeJob, NamespaceCapabilityEvaluateJob, NamespaceCapabilityPlanJob,
	NamespaceCapabilityTagJobVersion, NamespaceCapabilityStableJob,
	NamespaceCapabilityFailDeployment, NamespaceCapabilityPauseDeployment,
	NamespaceCapabilityPromoteDeployment, NamespaceCapabilityUnblockDeployment,
	NamespaceCapabilityCancelDeployment, NamespaceCapabilitySetAllocHealthDeployment,
	NamespaceCapabilityGCAllocation, NamespaceCapabilityPauseAllocation,
	NamespaceCapabilityForcePeriodicJob, NamespaceCapabilityDeleteServiceRegistration,
)

var nodePoolCaps = newCapTable("node_pool",
	NodePoolCapabilityDeny, NodePoolCapabilityRead, NodePoolCapabilityWrite, NodePoolCapabilityDelete)

var hostVolumeCaps = newCapTable("host_volume",
	HostVolumeCapabilityDeny, HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite)

var operatorCaps = newCapTable("operator",
	OperatorCapabilityDeny, OperatorCapabilitySnapshotSave, OperatorCapabilityLicenseRead)

var variablesCaps = newCapTable("variables path",
	VariablesCapabilityDeny, VariablesCapabilityList, VariablesCapabilityRead,
	VariablesCapabilityWrite, VariablesCapabilityDestroy)

// Nomad's shorthand expansions: what `policy = "..."` grants in each kind
// of block (Nomad's ACL policy specification).
var (
	namespaceRead = namespaceCaps.set(
		NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
		NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIReadVolume,
		NamespaceCapabilityReadJobScaling, NamespaceCapabilityListScalingPolicies,
		NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityHostVolumeRead)

	namespaceWrite = namespaceRead | namespaceCaps.set(
		NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
		NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
		NamespaceCapabilityAllocLifecycle, NamespaceCapabilityCSIMountVolume,
		NamespaceCapabilityCSIWriteVolume, NamespaceCapabilitySubmitRecommendation,
		NamespaceCapabilityHostVolumeCreate)

	namespaceScale = namespaceCaps.set(
		NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
		NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob,
		NamespaceCapabilityReadJob, NamespaceCapabilitySubmitRecommendation)
)

// namespacePolicyCaps expands a namespace block's policy.
func namespacePolicyCaps(policy string) capSet {
	switch policy {
	case PolicyDeny:
		return denyBit
	case PolicyRead:
		return namespaceRead
	case PolicyWrite:
		return namespaceWrite
	case PolicyScale:
		return namespaceScale
	}
	return 0
}

// impliedNamespaceCaps adds what host volume capabilities imply in Nomad:
// writing a volume includes registering, creating, deleting and reading
// it; registering includes creating; creating includes reading.
func impliedNamespaceCaps(c capSet) capSet {
	has := func(n string) bool { return c&namespaceCaps.bits[n] != 0 }
	if has(NamespaceCapabilityHostVolumeWrite) {
		c |= namespaceCaps.set(NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeCreate,
			NamespaceCapabilityHostVolumeDelete, NamespaceCapabilityHostVolumeRead)
	}
	if has(NamespaceCapabilityHostVolumeRegister) {
		c |= namespaceCaps.set(NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeRead)
	}
	if has(NamespaceCapabilityHostVolumeCreate) {
		c |= namespaceCaps.set(NamespaceCapabilityHostVolumeRead)
	}
	return c
}

// coarseCaps is what a deny, read or write policy grants in a kind of
// block whose shorthand is only those three; any other policy grants
// nothing.
type coarseCaps struct{ read, write capSet }

func (e coarseCaps) of(policy string) capSet {
	switch policy {
	case PolicyDeny:
		return denyBit
	case PolicyRead:
		return e.read
	case PolicyWrite:
		return e.write
	}
	return 0
}

var (
	nodePoolPolicyCaps = coarseCaps{
		read:  nodePoolCaps.set(NodePoolCapabilityRead),
		write: nodePoolCaps.set(NodePoolCapabilityRead, NodePoolCapabilityWrite, NodePoolCapabilityDelete),
	}.of
	hostVolumePolicyCaps = coarseCaps{
		read:  hostVolumeCaps.set(HostVolumeCapabilityMountReadOnly),
		write: hostVolumeCaps.set(HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite),
	}.of
	operatorPolicyCaps = coarseCaps{
		read:  operatorCaps.set(OperatorCapabilityLicenseRead),
		write: operatorCaps.set(OperatorCapabilityLicenseRead, OperatorCapabilitySnapshotSave),
	}.of
)

// variablesPathCaps applies Nomad's one implication for variables: read
// includes list, and deny stands alone.
func variablesPathCaps(c capSet) capSet {
	if c.denies() {
		return denyBit
	}
	if c&variablesCaps.bits[VariablesCapabilityRead] != 0 {
		c |= variablesCaps.bits[VariablesCapabilityList]
	}
	return c
}

// The dispositions each kind of block accepts, as Nomad documents them.
var (
	namespacePolicies = []string{PolicyDeny, PolicyRead, PolicyWrite, PolicyScale}
	coarsePolicies    = []string{PolicyDeny, PolicyRead, PolicyWrite}
	pluginPolicies    = []string{PolicyDeny, PolicyList, PolicyRead, PolicyWrite}
)

// privilege orders coarse dispositions for merging: the most privileged
// wins, except that deny beats everything.
func privilege(p string) int {
	switch p {
	case PolicyDeny:
		return 4
	case PolicyWrite:
		return 3
	case PolicyRead:
		return 2
	case PolicyList:
		return 1
	}
	return 0
}

// maxPrivilege merges two coarse dispositions.
func maxPrivilege(a, b string) string {
	if privilege(b) > privilege(a) {
		return b
	}
	return a
}

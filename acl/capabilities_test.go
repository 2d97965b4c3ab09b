package acl

import "testing"

// The coarse shorthands of node pool, host volume and operator blocks, as
// Nomad's policy specification gives them.
func TestCoarsePolicyShorthands(t *testing.T) {
	cases := []struct {
		name   string
		expand func(string) capSet
		policy string
		want   capSet
	}{
		{"node pool deny", nodePoolPolicyCaps, PolicyDeny, denyBit},
		{"node pool read", nodePoolPolicyCaps, PolicyRead, nodePoolCaps.set(NodePoolCapabilityRead)},
		{"node pool write", nodePoolPolicyCaps, PolicyWrite, nodePoolCaps.set(NodePoolCapabilityRead, NodePoolCapabilityWrite, NodePoolCapabilityDelete)},
		{"host volume deny", hostVolumePolicyCaps, PolicyDeny, denyBit},
		{"host volume read", hostVolumePolicyCaps, PolicyRead, hostVolumeCaps.set(HostVolumeCapabilityMountReadOnly)},
		{"host volume write", hostVolumePolicyCaps, PolicyWrite, hostVolumeCaps.set(HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite)},
		{"operator deny", operatorPolicyCaps, PolicyDeny, denyBit},
		{"operator read", operatorPolicyCaps, PolicyRead, operatorCaps.set(OperatorCapabilityLicenseRead)},
		{"operator write", operatorPolicyCaps, PolicyWrite, operatorCaps.set(OperatorCapabilityLicenseRead, OperatorCapabilitySnapshotSave)},
		{"no policy", operatorPolicyCaps, "", 0},
		{"scale is not a coarse policy", nodePoolPolicyCaps, PolicyScale, 0},
	}
	for _, c := range cases {
		if got := c.expand(c.policy); got != c.want {
			t.Errorf("%s: %b, want %b", c.name, got, c.want)
		}
	}
}

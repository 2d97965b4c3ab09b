package api

// Volume mount propagation modes.
const (
	VolumeMountPropagationPrivate       = "private"
	VolumeMountPropagationHostToTask    = "host-to-task"
	VolumeMountPropagationBidirectional = "bidirectional"
)

// VolumeRequest asks for a host or CSI volume for the group. Kept as data:
// Drover does not schedule volumes yet.
type VolumeRequest struct {
	Name           string
	Type           string
	Source         string
	ReadOnly       bool
	Sticky         bool
	AccessMode     string
	AttachmentMode string
	MountOptions   *CSIMountOptions
	PerAlloc       bool
}

// CSIMountOptions are file system options for mounting a CSI volume.
type CSIMountOptions struct {
	FSType     string
	MountFlags []string
}

// VolumeMount mounts one of the group's volumes into a task.
type VolumeMount struct {
	Volume          *string
	Destination     *string
	ReadOnly        *bool
	PropagationMode *string
	SELinuxLabel    *string
}

// Canonicalize fills unset fields: read-write, private propagation.
func (vm *VolumeMount) Canonicalize() {
	if vm.PropagationMode == nil {
		vm.PropagationMode = new(VolumeMountPropagationPrivate)
	}
	if vm.ReadOnly == nil {
		vm.ReadOnly = new(false)
	}
	if vm.SELinuxLabel == nil {
		vm.SELinuxLabel = new("")
	}
}

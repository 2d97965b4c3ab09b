package structs

import (
	"path/filepath"
	"sort"
	"strconv"
)

// Volume types a group `volume` block may name.
const (
	VolumeTypeHost = "host"
	VolumeTypeCSI  = "csi"
)

// Propagation modes of a task's volume_mount, as in Nomad.
const (
	VolumeMountPropagationPrivate       = "private"
	VolumeMountPropagationHostToTask    = "host-to-task"
	VolumeMountPropagationBidirectional = "bidirectional"
)

// ClientHostVolumeConfig is one `host_volume "<name>" { path, read_only }`
// block of a client's config: a directory of the host that jobs may
// mount by name. The client fingerprints them into its node
// (NodeResources.HostVolumes) so the scheduler places groups that ask for
// a volume only where it exists.
type ClientHostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
}

// Copy returns a copy.
func (v *ClientHostVolumeConfig) Copy() *ClientHostVolumeConfig {
	return copyPtr(v)
}

// ClientHostNetworkConfig is one `host_network "<name>" { cidr |
// interface, reserved_ports }` block of a client's config. Ports whose
// host_network names it are bound on the address the client found for it;
// the address itself is in NodeResources.NodeNetworks under the alias Name.
type ClientHostNetworkConfig struct {
	Name          string
	CIDR          string
	Interface     string
	ReservedPorts string
}

// Copy returns a copy.
func (n *ClientHostNetworkConfig) Copy() *ClientHostNetworkConfig {
	return copyPtr(n)
}

// copyBlocks deep-copies a node's host volumes or host networks.
func copyBlocks[V interface{ Copy() V }](in map[string]V) map[string]V {
	if in == nil {
		return nil
	}
	out := make(map[string]V, len(in))
	for k, v := range in {
		out[k] = v.Copy()
	}
	return out
}

// HostVolumeSource is the name of the node's host volume that request
// names for the allocation allocName: its source, with "[<index>]"
// appended when the request is per_alloc (as in Nomad), so allocation 2
// of a group asking for "data" per alloc mounts "data[2]".
func HostVolumeSource(req *VolumeRequest, allocName string) string {
	if !req.PerAlloc {
		return req.Source
	}
	return req.Source + "[" + strconv.Itoa(AllocIndexFromName(allocName)) + "]"
}

// HostVolumeRequests are the group's host volume requests sorted by name,
// so that whatever reports on them (placement failures, mounts) does so
// in the same order every time.
func HostVolumeRequests(tg *TaskGroup) []*VolumeRequest {
	var out []*VolumeRequest
	for _, v := range tg.Volumes {
		if v != nil && v.Type == VolumeTypeHost {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// validate checks one group volume block; key is its label.
func (v *VolumeRequest) validate(key string, p problems) {
	if v.Name != "" && v.Name != key {
		p.add("name %q differs from the block's label %q", v.Name, key)
	}
	switch v.Type {
	case VolumeTypeHost:
	case VolumeTypeCSI:
		p.add("type = \"csi\" is not supported: Drover has no CSI plugins; use type = \"host\" with a host_volume the clients declare")
		return
	case "":
		p.add("type is missing (want type = \"host\")")
		return
	default:
		p.add("type %q is not supported (want \"host\")", v.Type)
		return
	}
	if v.Source == "" {
		p.add("source is missing: name the client's host_volume to mount")
	}
	if v.MountOptions != nil {
		p.add("mount_options applies to CSI volumes only; remove it from a host volume")
	}
}

// validateVolumeMount checks one task volume_mount block against the
// group's volumes and the task's driver.
func validateVolumeMount(vm *VolumeMount, tg *TaskGroup, driver string, p problems) {
	if vm.Volume == "" {
		p.add("volume is missing: name one of the group's volume blocks")
	} else if _, ok := tg.Volumes[vm.Volume]; !ok {
		p.add("volume %q is not declared in the group (add volume %q { type = \"host\", source = \"...\" } to group %q)", vm.Volume, vm.Volume, tg.Name)
	}
	switch {
	case vm.Destination == "":
		p.add("destination is missing: the absolute path inside the task, such as \"/data\"")
	case !filepath.IsAbs(vm.Destination):
		p.add("destination %q must be an absolute path, such as \"/data\"", vm.Destination)
	case filepath.Clean(vm.Destination) == "/":
		p.add("destination must not be \"/\" (the task's root); mount the volume at a directory such as \"/data\"")
	}
	switch vm.PropagationMode {
	case "", VolumeMountPropagationPrivate, VolumeMountPropagationHostToTask, VolumeMountPropagationBidirectional:
	default:
		p.add("propagation_mode %q must be one of private, host-to-task, bidirectional", vm.PropagationMode)
	}
	if driver == "raw_exec" {
		p.add("raw_exec mounts no volumes (its tasks run in the host's file system, as in Nomad); use the exec or docker driver, or remove the volume_mount")
	}
}

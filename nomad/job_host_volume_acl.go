package nomad

import (
	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// checkHostVolumeACL refuses a job that mounts a host volume the token may
// not mount, as Nomad does at register: a read_only volume needs
// mount-readonly (or mount-readwrite, which includes it) in a host_volume
// block matching the volume's source, any other volume mount-readwrite.
// A per_alloc volume is checked by its source without the "[<index>]"
// suffix, so one policy covers every allocation's volume.
func checkHostVolumeACL(a *acl.ACL, job *structs.Job) error {
	if a.IsManagement() {
		return nil
	}
	for _, tg := range job.TaskGroups {
		for _, req := range structs.HostVolumeRequests(tg) {
			if a.AllowHostVolumeOperation(req.Source, acl.HostVolumeCapabilityMountReadWrite) {
				continue
			}
			if req.ReadOnly && a.AllowHostVolumeOperation(req.Source, acl.HostVolumeCapabilityMountReadOnly) {
				continue
			}
			want := acl.HostVolumeCapabilityMountReadWrite
			if req.ReadOnly {
				want = acl.HostVolumeCapabilityMountReadOnly
			}
			return permissionDenied("group %q mounts host volume %q: the token needs %s on it (a host_volume %q block in one of its policies)", tg.Name, req.Source, want, req.Source)
		}
	}
	return nil
}

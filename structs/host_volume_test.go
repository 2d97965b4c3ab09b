package structs

import (
	"strings"
	"testing"
)

// volumeJob is testJob with an exec task and one host volume mounted.
func volumeJob() *Job {
	j := testJob()
	tg := j.TaskGroups[0]
	tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: VolumeTypeHost, Source: "shared"}}
	tg.Tasks[0].Driver = "exec"
	tg.Tasks[0].VolumeMounts = []*VolumeMount{{Volume: "data", Destination: "/srv/data"}}
	return j
}

func TestValidateHostVolumes(t *testing.T) {
	cases := []struct {
		name string
		edit func(tg *TaskGroup)
		want string // "" means valid
	}{
		{"a mounted host volume is valid", func(tg *TaskGroup) {}, ""},
		{"per_alloc and read_only are valid", func(tg *TaskGroup) {
			tg.Volumes["data"].PerAlloc, tg.Volumes["data"].ReadOnly = true, true
			tg.Tasks[0].VolumeMounts[0].PropagationMode = VolumeMountPropagationPrivate
		}, ""},
		{"a mount of an undeclared volume names it", func(tg *TaskGroup) {
			tg.Tasks[0].VolumeMounts[0].Volume = "logs"
		}, `task "server" volume_mount[0]: volume "logs" is not declared in the group`},
		{"a relative destination is refused", func(tg *TaskGroup) {
			tg.Tasks[0].VolumeMounts[0].Destination = "data"
		}, `volume_mount[0]: destination "data" must be an absolute path`},
		{"a missing destination is refused", func(tg *TaskGroup) {
			tg.Tasks[0].VolumeMounts[0].Destination = ""
		}, `volume_mount[0]: destination is missing`},
		{"the root as destination is refused", func(tg *TaskGroup) {
			tg.Tasks[0].VolumeMounts[0].Destination = "/"
		}, `destination must not be "/"`},
		{"an unknown propagation mode is refused", func(tg *TaskGroup) {
			tg.Tasks[0].VolumeMounts[0].PropagationMode = "shared"
		}, `propagation_mode "shared" must be one of private, host-to-task, bidirectional`},
		{"a csi volume says it is not supported", func(tg *TaskGroup) {
			tg.Volumes["data"].Type = VolumeTypeCSI
		}, `volume "data": type = "csi" is not supported`},
		{"an unknown type is refused", func(tg *TaskGroup) {
			tg.Volumes["data"].Type = "nfs"
		}, `volume "data": type "nfs" is not supported (want "host")`},
		{"a missing type is refused", func(tg *TaskGroup) {
			tg.Volumes["data"].Type = ""
		}, `volume "data": type is missing`},
		{"a host volume without source is refused", func(tg *TaskGroup) {
			tg.Volumes["data"].Source = ""
		}, `volume "data": source is missing`},
		{"raw_exec with a volume mount says it mounts nothing", func(tg *TaskGroup) {
			tg.Tasks[0].Driver = "raw_exec"
		}, `task "server" volume_mount[0]: raw_exec mounts no volumes`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := volumeJob()
			tc.edit(j.TaskGroups[0])
			j.Canonicalize()
			err := j.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestHostVolumeSourcePerAlloc(t *testing.T) {
	req := &VolumeRequest{Source: "db"}
	if got := HostVolumeSource(req, "web.api[2]"); got != "db" {
		t.Fatalf("shared volume: got %q", got)
	}
	req.PerAlloc = true
	if got := HostVolumeSource(req, "web.api[2]"); got != "db[2]" {
		t.Fatalf("per_alloc volume: got %q, want db[2]", got)
	}
}

func TestNodeCopyCopiesHostVolumesAndNetworks(t *testing.T) {
	n := &Node{NodeResources: &NodeResources{
		HostVolumes:  map[string]*ClientHostVolumeConfig{"data": {Name: "data", Path: "/srv"}},
		HostNetworks: map[string]*ClientHostNetworkConfig{"private": {Name: "private", Interface: "eth1"}},
	}}
	c := n.Copy()
	c.NodeResources.HostVolumes["data"].Path = "/other"
	c.NodeResources.HostNetworks["private"].Interface = "eth2"
	if n.NodeResources.HostVolumes["data"].Path != "/srv" || n.NodeResources.HostNetworks["private"].Interface != "eth1" {
		t.Fatal("Copy shares the host volumes or networks with the original")
	}
}

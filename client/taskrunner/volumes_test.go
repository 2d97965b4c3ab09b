package taskrunner

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestVolumeMountsResolveAgainstTheNodesHostVolumes(t *testing.T) {
	node := &structs.Node{NodeResources: &structs.NodeResources{HostVolumes: map[string]*structs.ClientHostVolumeConfig{
		"data":    {Name: "data", Path: "/srv/data"},
		"certs":   {Name: "certs", Path: "/etc/certs", ReadOnly: true},
		"db[1]":   {Name: "db[1]", Path: "/srv/db1"},
		"scratch": {Name: "scratch", Path: "/srv/scratch"},
	}}}
	job := &structs.Job{ID: "web", TaskGroups: []*structs.TaskGroup{{Name: "api", Volumes: map[string]*structs.VolumeRequest{
		"data":    {Name: "data", Type: "host", Source: "data"},
		"certs":   {Name: "certs", Type: "host", Source: "certs"},
		"db":      {Name: "db", Type: "host", Source: "db", PerAlloc: true},
		"scratch": {Name: "scratch", Type: "host", Source: "scratch", ReadOnly: true},
	}}}}
	alloc := &structs.Allocation{Name: "web.api[1]", TaskGroup: "api", Job: job}
	task := &structs.Task{Name: "t", VolumeMounts: []*structs.VolumeMount{
		{Volume: "data", Destination: "/data"},
		{Volume: "data", Destination: "/data-ro", ReadOnly: true},
		{Volume: "certs", Destination: "/certs"},
		{Volume: "db", Destination: "/db", PropagationMode: "host-to-task"},
		{Volume: "scratch", Destination: "/scratch"},
	}}
	got, err := volumeMounts(node, alloc, task)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/data=/srv/data rw private", "/data-ro=/srv/data ro private", "/certs=/etc/certs ro private",
		"/db=/srv/db1 rw host-to-task", "/scratch=/srv/scratch ro private",
	}
	for i, m := range got {
		mode := "rw"
		if m.Readonly {
			mode = "ro"
		}
		if s := m.TaskPath + "=" + m.HostPath + " " + mode + " " + m.PropagationMode; s != want[i] {
			t.Fatalf("mount %d: got %q, want %q", i, s, want[i])
		}
	}

	alloc.Name = "web.api[2]"
	if _, err := volumeMounts(node, alloc, task); err == nil || !strings.Contains(err.Error(), `this client has no host_volume "db[2]"`) {
		t.Fatalf("a per_alloc volume the client lacks: got %v", err)
	}
}

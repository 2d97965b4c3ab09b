package nomad

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// A token registers a job that mounts a host volume only with the
// volume's capability: mount-readwrite for a writable volume,
// mount-readonly (or more) for a read_only one. A refusal writes nothing.
func TestRegisterNeedsTheHostVolumeCapability(t *testing.T) {
	t.Parallel()
	ns := `namespace "default" { policy = "write" }` + "\n"
	f := newACLTokens(t, map[string]string{
		"novol":   ns,
		"ro":      ns + `host_volume "data" { policy = "read" }`,
		"rw":      ns + `host_volume "data*" { policy = "write" }`,
		"rwcap":   ns + `host_volume "data" { capabilities = ["mount-readwrite"] }`,
		"denied":  ns + `host_volume "*" { policy = "write" }` + "\n" + `host_volume "data" { policy = "deny" }`,
		"another": ns + `host_volume "logs" { policy = "write" }`,
	}, nil)
	s := f.s
	job := func(id string, readOnly bool) *structs.Job {
		j := jobIn("default", id)
		tg := j.TaskGroups[0]
		tg.Volumes = map[string]*structs.VolumeRequest{"v": {Name: "v", Type: structs.VolumeTypeHost, Source: "data", ReadOnly: readOnly}}
		tg.Tasks[0].VolumeMounts = []*structs.VolumeMount{{Volume: "v", Destination: "/data"}}
		return j
	}
	register := func(who string, j *structs.Job) error {
		return userRPC(s, "Job.Register", &structs.JobRegisterRequest{Job: j, WriteRequest: write(f.secret[who])}, &structs.JobRegisterResponse{})
	}
	cases := []struct {
		who      string
		readOnly bool
		allowed  bool
	}{
		{"novol", true, false}, {"novol", false, false},
		{"ro", true, true}, {"ro", false, false},
		{"rw", true, true}, {"rw", false, true},
		{"rwcap", true, true}, {"rwcap", false, true},
		{"denied", true, false}, {"denied", false, false},
		{"another", false, false},
	}
	for i, tc := range cases {
		id := "job-" + tc.who + "-" + map[bool]string{true: "ro", false: "rw"}[tc.readOnly]
		before := latestIndex(t, s)
		err := register(tc.who, job(id, tc.readOnly))
		if tc.allowed {
			if err != nil {
				t.Fatalf("case %d: %s registering a read_only=%v volume: %v", i, tc.who, tc.readOnly, err)
			}
			continue
		}
		requireDenied(t, tc.who, err)
		if !strings.Contains(err.Error(), `host volume "data"`) {
			t.Fatalf("case %d: the refusal does not name the volume: %v", i, err)
		}
		if latestIndex(t, s) != before {
			t.Fatalf("case %d: a refused register wrote to raft", i)
		}
	}
	if err := userRPC(s, "Job.Register", &structs.JobRegisterRequest{Job: job("mgmt", false), WriteRequest: write(f.mgmt)}, &structs.JobRegisterResponse{}); err != nil {
		t.Fatalf("management: %v", err)
	}
}

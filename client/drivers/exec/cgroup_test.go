package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A limit whose controller is missing fails the start, naming it, and
// creates nothing; a weight (cpu shares) does not need its controller.
func TestALimitThatCannotBeEnforcedFailsCreate(t *testing.T) {
	all := map[string]bool{"memory": true, "cpu": true, "cpuacct": true, "pids": true, "cpuset": true, "freezer": true}
	without := func(ctrl string) map[string]bool {
		m := map[string]bool{}
		for k, v := range all {
			m[k] = v && k != ctrl
		}
		return m
	}
	for _, tc := range []struct {
		name string
		have map[string]bool
		l    limits
		want string
	}{
		{"memory", without("memory"), limits{MemoryBytes: 64 << 20, PidsLimit: 10}, "memory (a limit of 64 MiB)"},
		{"pids", without("pids"), limits{MemoryBytes: 64 << 20, PidsLimit: 10}, "pids (a limit of 10 processes)"},
		{"cpuset", without("cpuset"), limits{Cores: "0-1"}, "cpuset (reserved cores 0-1)"},
	} {
		for _, v := range []int{1, 2} {
			root := t.TempDir()
			var cg cgroups = &cgroupV1{root: root, have: tc.have}
			if v == 2 {
				cg = &cgroupV2{root: root, have: tc.have}
			}
			err := cg.Create("t", tc.l)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not available") {
				t.Errorf("v%d without %s: error %v, want one saying %q", v, tc.name, err, tc.want)
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Errorf("v%d without %s: a refused Create left %v", v, tc.name, entries)
			}
		}
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "drover"), 0o755); err != nil {
		t.Fatal(err)
	}
	cg := &cgroupV2{root: root, have: without("cpu")}
	if err := cg.Create("t", limits{CPUShares: 100}); err != nil {
		t.Errorf("cpu shares without the cpu controller: %v", err)
	}
}

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

// A task's resources become the limits its cgroup is created with:
// memory is the hard limit, or, with memory_max, the soft one under
// memory_max's hard limit; cpu shares and reserved cores pass through.
func TestATasksResourcesBecomeItsCgroupLimits(t *testing.T) {
	i := &isolation{pids: 512}
	for _, tc := range []struct {
		name string
		r    drivers.TaskResources
		want limits
	}{
		{"memory alone is the hard limit", drivers.TaskResources{MemoryMB: 64, CPUShares: 250},
			limits{MemoryBytes: 64 << 20, CPUShares: 250, PidsLimit: 512}},
		{"memory_max raises the hard limit, memory stays the soft one", drivers.TaskResources{MemoryMB: 64, MemoryMaxMB: 256, CPUShares: 100},
			limits{MemoryBytes: 256 << 20, MemorySoftBytes: 64 << 20, CPUShares: 100, PidsLimit: 512}},
		{"a memory_max under memory is ignored", drivers.TaskResources{MemoryMB: 64, MemoryMaxMB: 32},
			limits{MemoryBytes: 64 << 20, PidsLimit: 512}},
		{"reserved cores become a cpuset", drivers.TaskResources{MemoryMB: 16, Cores: []uint16{0, 2, 3}},
			limits{MemoryBytes: 16 << 20, Cores: "0,2,3", PidsLimit: 512}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := i.limits(&drivers.TaskConfig{Resources: tc.r})
			if got != tc.want {
				t.Fatalf("limits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// readCgroupFile is a limit file's value, or "" if it was never written.
func readCgroupFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Each limit reaches the file its cgroup version reads, with the value
// that version means: v1's shares as they are, v2's weight mapped from
// shares onto 1..10000; swap held at the memory limit (v1) or at none
// (v2) where the kernel offers it.
func TestEveryLimitReachesItsCgroupFile(t *testing.T) {
	all := map[string]bool{"memory": true, "cpu": true, "cpuacct": true, "pids": true, "cpuset": true, "freezer": true}
	l := limits{MemoryBytes: 256 << 20, MemorySoftBytes: 64 << 20, CPUShares: 1024, PidsLimit: 77, Cores: "1"}

	t.Run("v1", func(t *testing.T) {
		root := t.TempDir()
		// The kernel's files a real hierarchy has: the parent cpuset and
		// the memsw file memory groups have when swap accounting is on.
		mustWrite(t, filepath.Join(root, "cpuset", "drover", "cpuset.cpus"), "0-3")
		mustWrite(t, filepath.Join(root, "cpuset", "drover", "cpuset.mems"), "0")
		mustWrite(t, filepath.Join(root, "memory", "drover", "t", "memory.memsw.limit_in_bytes"), "9223372036854771712")
		cg := &cgroupV1{root: root, have: all}
		if err := cg.Create("t", l); err != nil {
			t.Fatal(err)
		}
		for file, want := range map[string]string{
			"memory/drover/t/memory.limit_in_bytes":       "268435456",
			"memory/drover/t/memory.memsw.limit_in_bytes": "268435456",
			"memory/drover/t/memory.soft_limit_in_bytes":  "67108864",
			"cpu/drover/t/cpu.shares":                     "1024",
			"pids/drover/t/pids.max":                      "77",
			"cpuset/drover/t/cpuset.cpus":                 "1",
			"cpuset/drover/t/cpuset.mems":                 "0",
		} {
			if got := readCgroupFile(t, filepath.Join(root, file)); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
	})

	t.Run("v2", func(t *testing.T) {
		root := t.TempDir()
		mustWrite(t, filepath.Join(root, "drover", "t", "memory.swap.max"), "max")
		cg := &cgroupV2{root: root, have: all}
		if err := cg.Create("t", l); err != nil {
			t.Fatal(err)
		}
		for file, want := range map[string]string{
			"memory.max":      "268435456",
			"memory.low":      "67108864",
			"memory.swap.max": "0",
			"cpu.weight":      "39", // 1 + (1024-2) × 9999 / 262142
			"pids.max":        "77",
			"cpuset.cpus":     "1",
		} {
			if got := readCgroupFile(t, filepath.Join(root, "drover", "t", file)); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
	})

	t.Run("v2 weight bounds", func(t *testing.T) {
		for shares, want := range map[int64]string{1: "1", 2: "1", 262144: "10000"} {
			root := t.TempDir()
			cg := &cgroupV2{root: root, have: all}
			if err := cg.Create("t", limits{CPUShares: shares}); err != nil {
				t.Fatal(err)
			}
			if got := readCgroupFile(t, filepath.Join(root, "drover", "t", "cpu.weight")); got != want {
				t.Errorf("shares %d: cpu.weight = %q, want %q", shares, got, want)
			}
		}
	})

	t.Run("no soft limit without memory_max", func(t *testing.T) {
		root := t.TempDir()
		cg := &cgroupV2{root: root, have: all}
		if err := cg.Create("t", limits{MemoryBytes: 32 << 20}); err != nil {
			t.Fatal(err)
		}
		if got := readCgroupFile(t, filepath.Join(root, "drover", "t", "memory.low")); got != "" {
			t.Errorf("memory.low = %q, want it unwritten", got)
		}
	})
}

func mustWrite(t *testing.T, path, value string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
}

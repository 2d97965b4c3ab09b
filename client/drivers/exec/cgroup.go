package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// limits are what a task's cgroups enforce.
type limits struct {
	// MemoryBytes is the hard limit: memory_max when set, else memory.
	MemoryBytes int64
	// MemorySoftBytes is memory when memory_max raised the hard limit.
	MemorySoftBytes int64
	CPUShares       int64
	// Cores is cpuset.cpus ("0-1,3"); empty leaves the parent's.
	Cores     string
	PidsLimit int64
}

// enforceable refuses limits a missing controller would silently drop: a
// task asking for a memory, pids or cpuset limit must not run without it.
// CPU shares are a weight, not a limit, and run without the controller.
func enforceable(l limits, have map[string]bool, where string) error {
	var missing []string
	if l.MemoryBytes > 0 && !have["memory"] {
		missing = append(missing, fmt.Sprintf("memory (a limit of %d MiB)", l.MemoryBytes>>20))
	}
	if l.PidsLimit > 0 && !have["pids"] {
		missing = append(missing, fmt.Sprintf("pids (a limit of %d processes)", l.PidsLimit))
	}
	if l.Cores != "" && !have["cpuset"] {
		missing = append(missing, fmt.Sprintf("cpuset (reserved cores %s)", l.Cores))
	}
	if len(missing) > 0 {
		return fmt.Errorf("cannot enforce the task's limits: the %s controller is not available to Drover under %s; enable it (on cgroup v2, in cgroup.subtree_control of the root and of drover/)",
			strings.Join(missing, " and the "), where)
	}
	return nil
}

// usage is one sample of a task's cgroups.
type usage struct {
	RSS      uint64
	CPUNanos uint64
	Pids     int
}

// cgroups is one cgroup hierarchy layout (v1 or v2). Groups are named
// drover/<name>; each method takes that name.
type cgroups interface {
	// Version is 1 or 2.
	Version() int
	// Controllers reports which limits are enforced: memory, cpu, pids,
	// cpuset, freezer.
	Controllers() map[string]bool
	// Create makes the task's groups and sets their limits.
	Create(name string, l limits) error
	// Add moves pid into every group of the task.
	Add(name string, pid int) error
	// Dir is the v2 group's directory, to clone into (empty on v1).
	Dir(name string) string
	// Kill kills every process in the task's groups.
	Kill(name string) error
	// Procs lists the pids in the task's groups.
	Procs(name string) []int
	// Usage samples the groups.
	Usage(name string) (usage, error)
	// OOMKilled reports whether the kernel killed a process of the group
	// for memory.
	OOMKilled(name string) bool
	// Remove deletes the groups; they must be empty.
	Remove(name string) error
}

// detectCgroups picks the layout mounted at root.
func detectCgroups(root string) cgroups {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return newCgroupV2(root)
	}
	return newCgroupV1(root)
}

// removeWhenEmpty retries Remove until the groups are empty: processes
// that were just killed leave their cgroup a moment after the signal.
func removeWhenEmpty(cg cgroups, name string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		err := cg.Remove(name)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if len(cg.Procs(name)) > 0 {
			_ = cg.Kill(name)
		}
		time.Sleep(10 * time.Millisecond) // kernel state, no event to wait on
	}
}

func writeFile(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("cgroup %s: write %q to %s: %w", dir, value, file, err)
	}
	return nil
}

func readInt(dir, file string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// readKeyed reads one "key value" line of a flat keyed file (memory.stat,
// memory.events, cpu.stat, memory.oom_control).
func readKeyed(dir, file, key string) (uint64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func readPids(file string) []int {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// removeDir removes an empty cgroup directory; a missing one is fine.
func removeDir(dir string) error {
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writable reports whether a group can be created under dir.
func writable(dir string) bool {
	if err := os.MkdirAll(filepath.Join(dir, "drover"), 0o755); err != nil {
		return false
	}
	probe := filepath.Join(dir, "drover", ".probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return false
	}
	_ = os.Remove(probe)
	return true
}

package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupV2 is the unified layout: one group per task under drover/. The
// init is cloned straight into it (SysProcAttr.UseCgroupFD).
type cgroupV2 struct {
	root string
	have map[string]bool
}

func newCgroupV2(root string) *cgroupV2 {
	c := &cgroupV2{root: root, have: map[string]bool{}}
	if !writable(root) {
		return c
	}
	b, _ := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	avail := strings.Fields(string(b))
	var enable []string
	for _, ctrl := range []string{"memory", "cpu", "pids", "cpuset"} {
		for _, a := range avail {
			if a == ctrl {
				enable = append(enable, "+"+ctrl)
			}
		}
	}
	for _, dir := range []string{root, filepath.Join(root, "drover")} {
		for _, e := range enable {
			_ = writeFile(dir, "cgroup.subtree_control", e)
		}
	}
	b, _ = os.ReadFile(filepath.Join(root, "drover", "cgroup.subtree_control"))
	for _, ctrl := range strings.Fields(string(b)) {
		c.have[ctrl] = true
	}
	// Freezing is built into every v2 group.
	c.have["freezer"] = true
	return c
}

func (c *cgroupV2) Version() int { return 2 }

func (c *cgroupV2) Controllers() map[string]bool {
	return map[string]bool{"memory": c.have["memory"], "cpu": c.have["cpu"], "pids": c.have["pids"], "cpuset": c.have["cpuset"], "freezer": c.have["freezer"]}
}

func (c *cgroupV2) Dir(name string) string { return filepath.Join(c.root, "drover", name) }

func (c *cgroupV2) Create(name string, l limits) error {
	if err := enforceable(l, c.have, c.root); err != nil {
		return err
	}
	dir := c.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create cgroup: %w", err)
	}
	if c.have["memory"] && l.MemoryBytes > 0 {
		if err := writeFile(dir, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			if err := writeFile(dir, "memory.swap.max", "0"); err != nil {
				return err
			}
		}
		if l.MemorySoftBytes > 0 {
			if err := writeFile(dir, "memory.low", strconv.FormatInt(l.MemorySoftBytes, 10)); err != nil {
				return err
			}
		}
	}
	if c.have["cpu"] && l.CPUShares > 0 {
		// cpu.weight is 1..10000 where v1 shares were 2..262144.
		w := 1 + ((max(l.CPUShares, 2)-2)*9999)/262142
		if err := writeFile(dir, "cpu.weight", strconv.FormatInt(w, 10)); err != nil {
			return err
		}
	}
	if c.have["pids"] && l.PidsLimit > 0 {
		if err := writeFile(dir, "pids.max", strconv.FormatInt(l.PidsLimit, 10)); err != nil {
			return err
		}
	}
	if c.have["cpuset"] && l.Cores != "" {
		if err := writeFile(dir, "cpuset.cpus", l.Cores); err != nil {
			return err
		}
	}
	return nil
}

func (c *cgroupV2) Add(name string, pid int) error {
	return writeFile(c.Dir(name), "cgroup.procs", strconv.Itoa(pid))
}

// Kill uses cgroup.kill (Linux 5.14) where it exists, else freezes,
// kills each process and thaws.
func (c *cgroupV2) Kill(name string) error {
	dir := c.Dir(name)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err == nil {
		return writeFile(dir, "cgroup.kill", "1")
	}
	if err := writeFile(dir, "cgroup.freeze", "1"); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	deadline := time.Now().Add(time.Second)
	for {
		if n, ok := readKeyed(dir, "cgroup.events", "frozen"); (ok && n == 1) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // kernel state, no event to wait on
	}
	for _, pid := range c.Procs(name) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	return writeFile(dir, "cgroup.freeze", "0")
}

func (c *cgroupV2) Procs(name string) []int {
	return readPids(filepath.Join(c.Dir(name), "cgroup.procs"))
}

func (c *cgroupV2) Usage(name string) (usage, error) {
	dir := c.Dir(name)
	var u usage
	if n, ok := readKeyed(dir, "memory.stat", "anon"); ok {
		u.RSS = n
	}
	if n, ok := readKeyed(dir, "cpu.stat", "usage_usec"); ok {
		u.CPUNanos = n * 1000
	}
	u.Pids = len(c.Procs(name))
	return u, nil
}

func (c *cgroupV2) OOMKilled(name string) bool {
	n, ok := readKeyed(c.Dir(name), "memory.events", "oom_kill")
	return ok && n > 0
}

func (c *cgroupV2) Remove(name string) error { return removeDir(c.Dir(name)) }

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

// v1Controllers are the cgroup v1 hierarchies a task joins. cpuacct is
// read for usage only; devices holds the task to allowedDevices.
var v1Controllers = []string{"memory", "cpu", "cpuacct", "pids", "freezer", "cpuset", "devices"}

// allowedDevices are the only device nodes a task may open or create
// (v1 devices cgroup): null, zero, full, random, urandom, tty, ptmx and
// its own ptys. The nodev mounts of everything a task can write are the
// other guard, and the only one on cgroup v2, which has no devices file
// (its device control is a BPF program Drover does not load).
var allowedDevices = []string{
	"c 1:3 rwm", "c 1:5 rwm", "c 1:7 rwm", "c 1:8 rwm", "c 1:9 rwm",
	"c 5:0 rwm", "c 5:2 rwm", "c 136:* rwm",
}

// cgroupV1 is the legacy layout: one hierarchy per controller. A process
// cannot be started inside a v1 group; the init waits until the driver
// has moved it (see execinit's doc).
type cgroupV1 struct {
	root string
	have map[string]bool
}

func newCgroupV1(root string) *cgroupV1 {
	c := &cgroupV1{root: root, have: map[string]bool{}}
	for _, ctrl := range v1Controllers {
		c.have[ctrl] = writable(filepath.Join(root, ctrl))
	}
	if c.have["cpuset"] {
		// A cpuset group admits no process until cpus and mems are set,
		// and drover/ is such a group too.
		parent := filepath.Join(root, "cpuset")
		if err := inheritCpuset(parent, filepath.Join(parent, "drover")); err != nil {
			c.have["cpuset"] = false
		}
	}
	return c
}

func inheritCpuset(parent, dir string) error {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		cur, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil && strings.TrimSpace(string(cur)) != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(parent, f))
		if err != nil {
			return err
		}
		if err := writeFile(dir, f, strings.TrimSpace(string(b))); err != nil {
			return err
		}
	}
	return nil
}

func (c *cgroupV1) Version() int { return 1 }

func (c *cgroupV1) Controllers() map[string]bool {
	return map[string]bool{"memory": c.have["memory"], "cpu": c.have["cpu"], "pids": c.have["pids"], "cpuset": c.have["cpuset"], "freezer": c.have["freezer"]}
}

func (c *cgroupV1) dir(ctrl, name string) string {
	return filepath.Join(c.root, ctrl, "drover", name)
}

func (c *cgroupV1) Create(name string, l limits) error {
	if err := enforceable(l, c.have, c.root); err != nil {
		return err
	}
	for _, ctrl := range v1Controllers {
		if !c.have[ctrl] {
			continue
		}
		if err := os.MkdirAll(c.dir(ctrl, name), 0o755); err != nil {
			return fmt.Errorf("create %s cgroup: %w", ctrl, err)
		}
	}
	if c.have["devices"] {
		dir := c.dir("devices", name)
		if err := writeFile(dir, "devices.deny", "a"); err != nil {
			return err
		}
		for _, d := range allowedDevices {
			if err := writeFile(dir, "devices.allow", d); err != nil {
				return err
			}
		}
	}
	if c.have["memory"] && l.MemoryBytes > 0 {
		dir := c.dir("memory", name)
		if err := writeFile(dir, "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return err
		}
		// Without memsw a task over its limit would swap instead of
		// being held to it.
		if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
			if err := writeFile(dir, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
				return err
			}
		}
		if l.MemorySoftBytes > 0 {
			if err := writeFile(dir, "memory.soft_limit_in_bytes", strconv.FormatInt(l.MemorySoftBytes, 10)); err != nil {
				return err
			}
		}
	}
	if c.have["cpu"] && l.CPUShares > 0 {
		if err := writeFile(c.dir("cpu", name), "cpu.shares", strconv.FormatInt(max(l.CPUShares, 2), 10)); err != nil {
			return err
		}
	}
	if c.have["pids"] && l.PidsLimit > 0 {
		if err := writeFile(c.dir("pids", name), "pids.max", strconv.FormatInt(l.PidsLimit, 10)); err != nil {
			return err
		}
	}
	if c.have["cpuset"] {
		dir := c.dir("cpuset", name)
		if err := inheritCpuset(filepath.Join(c.root, "cpuset", "drover"), dir); err != nil {
			return fmt.Errorf("cpuset cgroup: %w", err)
		}
		if l.Cores != "" {
			if err := writeFile(dir, "cpuset.cpus", l.Cores); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *cgroupV1) Add(name string, pid int) error {
	for _, ctrl := range v1Controllers {
		if !c.have[ctrl] {
			continue
		}
		if err := writeFile(c.dir(ctrl, name), "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

func (c *cgroupV1) Dir(string) string { return "" }

// Kill freezes the group so nothing in it can fork while it is killed,
// kills every process, and thaws it so the kills are delivered. Without
// the freezer it kills what it sees, twice.
func (c *cgroupV1) Kill(name string) error {
	if !c.have["freezer"] {
		for range 2 {
			for _, pid := range c.Procs(name) {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		return nil
	}
	dir := c.dir("freezer", name)
	if err := writeFile(dir, "freezer.state", "FROZEN"); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	deadline := time.Now().Add(time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "freezer.state"))
		if strings.TrimSpace(string(b)) == "FROZEN" || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // kernel state, no event to wait on
	}
	for _, pid := range readPids(filepath.Join(dir, "cgroup.procs")) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	return writeFile(dir, "freezer.state", "THAWED")
}

func (c *cgroupV1) Procs(name string) []int {
	seen := map[int]bool{}
	var out []int
	for _, ctrl := range v1Controllers {
		if !c.have[ctrl] {
			continue
		}
		for _, p := range readPids(filepath.Join(c.dir(ctrl, name), "cgroup.procs")) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func (c *cgroupV1) Usage(name string) (usage, error) {
	var u usage
	if c.have["memory"] {
		if rss, ok := readKeyed(c.dir("memory", name), "memory.stat", "total_rss"); ok {
			u.RSS = rss
		}
	}
	if c.have["cpuacct"] {
		n, err := readInt(c.dir("cpuacct", name), "cpuacct.usage")
		if err != nil {
			return u, err
		}
		u.CPUNanos = n
	}
	u.Pids = len(c.Procs(name))
	return u, nil
}

func (c *cgroupV1) OOMKilled(name string) bool {
	n, ok := readKeyed(c.dir("memory", name), "memory.oom_control", "oom_kill")
	return ok && n > 0
}

func (c *cgroupV1) Remove(name string) error {
	var errs []error
	for _, ctrl := range v1Controllers {
		if !c.have[ctrl] {
			continue
		}
		if err := removeDir(c.dir(ctrl, name)); err != nil {
			errs = append(errs, fmt.Errorf("remove %s cgroup: %w", ctrl, err))
		}
	}
	return errors.Join(errs...)
}

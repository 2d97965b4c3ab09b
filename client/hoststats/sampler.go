package hoststats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Sampler samples the host. See the package doc.
type Sampler struct {
	procRoot string

	mu   sync.Mutex
	prev map[string]cpuTimes // the previous /proc/stat reading
}

// NewSampler reads the host through procRoot ("/proc"; tests point it at
// a fixture).
func NewSampler(procRoot string) *Sampler {
	return &Sampler{procRoot: procRoot}
}

// Sample reads the host now. allocDir is the directory whose filesystem
// is reported as AllocDir; totalMHz is the node's total compute, which
// turns the busy fraction into CPUTicksConsumed.
func (s *Sampler) Sample(now time.Time, allocDir string, totalMHz float64) (*Stats, error) {
	mem, err := readMemory(s.procRoot)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	uptime, err := readUptime(s.procRoot)
	if err != nil {
		return nil, fmt.Errorf("uptime: %w", err)
	}
	cur, cores, err := readCPUTimes(s.procRoot)
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	out := &Stats{Memory: mem, Uptime: uptime, Timestamp: now, CPU: make([]CPU, 0, len(cores)), Disks: []Disk{}}

	s.mu.Lock()
	prev := s.prev
	s.prev = cur
	s.mu.Unlock()
	for _, name := range cores {
		out.CPU = append(out.CPU, cpuUse(name, prev[name], cur[name]))
	}
	all := cpuUse("cpu", prev["cpu"], cur["cpu"])
	out.CPUTicksConsumed = (100 - all.Idle) / 100 * totalMHz

	mounts, err := readMounts(s.procRoot)
	if err != nil {
		return nil, fmt.Errorf("mounts: %w", err)
	}
	allocMount := mountOf(mounts, allocDir)
	seen := map[string]bool{}
	for _, m := range mounts {
		if (!strings.HasPrefix(m.device, "/") && m != allocMount) || seen[m.device] {
			continue
		}
		seen[m.device] = true
		if d, err := statDisk(m); err == nil {
			out.Disks = append(out.Disks, d)
		}
	}
	if allocDir != "" {
		// The alloc dir may not exist before the first alloc; its
		// filesystem is that of its nearest existing parent.
		d, err := statDisk(mount{device: allocMount.device, point: existingParent(allocDir)})
		if err != nil {
			return nil, fmt.Errorf("alloc dir: %w", err)
		}
		d.Mountpoint = allocMount.point
		out.AllocDir = d
	}
	return out, nil
}

// cpuUse is the share of each state between two readings. Without an
// earlier reading (or with one no older in ticks) it is the share since
// boot, so the answer is never empty or NaN.
func cpuUse(name string, prev, cur cpuTimes) CPU {
	total := float64(cur.total()) - float64(prev.total())
	if total <= 0 || cur.total() < prev.total() {
		prev, total = cpuTimes{}, float64(cur.total())
	}
	if total <= 0 {
		return CPU{Name: name, Idle: 100}
	}
	pct := func(c, p uint64) float64 {
		if c < p {
			return 0
		}
		return 100 * float64(c-p) / total
	}
	return CPU{
		Name:   name,
		User:   pct(cur.user+cur.nice, prev.user+prev.nice),
		System: pct(cur.system+cur.irq+cur.softirq, prev.system+prev.irq+prev.softirq),
		Idle:   pct(cur.idle+cur.iowait, prev.idle+prev.iowait),
	}
}

// existingParent returns path, or its nearest parent that exists.
func existingParent(path string) string {
	for {
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

// mountOf returns the mount holding path: the longest mount point that
// is a prefix of it.
func mountOf(mounts []mount, path string) mount {
	var best mount
	if path == "" {
		return best
	}
	if real, err := filepath.EvalSymlinks(existingParent(path)); err == nil {
		path = real
	}
	for _, m := range mounts {
		under := m.point == "/" || path == m.point || strings.HasPrefix(path, m.point+"/")
		if under && len(m.point) >= len(best.point) {
			best = m
		}
	}
	return best
}

func statDisk(m mount) (Disk, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(m.point, &st); err != nil {
		return Disk{}, err
	}
	bs := uint64(st.Bsize)
	d := Disk{Device: m.device, Mountpoint: m.point, Size: st.Blocks * bs, Available: st.Bavail * bs}
	if st.Blocks >= st.Bfree {
		d.Used = (st.Blocks - st.Bfree) * bs
	}
	// Percent of what users can have, as df shows it: reserved blocks
	// count as neither used nor available.
	if usable := d.Used + d.Available; usable > 0 {
		d.UsedPercent = 100 * float64(d.Used) / float64(usable)
	}
	if st.Files > 0 && st.Files >= st.Ffree {
		d.InodesUsedPercent = 100 * float64(st.Files-st.Ffree) / float64(st.Files)
	}
	return d, nil
}

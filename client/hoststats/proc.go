package hoststats

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/helper/mountinfo"
)

// cpuTimes are one line of /proc/stat, in USER_HZ ticks since boot.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// total counts every state once: guest time is already inside user.
func (t cpuTimes) total() uint64 {
	return t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal
}

// readCPUTimes parses /proc/stat: the "cpu" line of all cores under the
// name "cpu", and one "cpuN" line per core.
func readCPUTimes(procRoot string) (map[string]cpuTimes, []string, error) {
	f, err := os.Open(filepath.Join(procRoot, "stat"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	out := map[string]cpuTimes{}
	var cores []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var v [8]uint64
		for i := range v {
			if i+1 < len(fields) {
				v[i], _ = strconv.ParseUint(fields[i+1], 10, 64)
			}
		}
		out[fields[0]] = cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		if fields[0] != "cpu" {
			cores = append(cores, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if _, ok := out["cpu"]; !ok {
		return nil, nil, fmt.Errorf("%s/stat has no cpu line", procRoot)
	}
	return out, cores, nil
}

// readMemory parses /proc/meminfo (values in kB).
func readMemory(procRoot string) (Memory, error) {
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	kb := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 {
			n, err := strconv.ParseUint(fields[1], 10, 64)
			if err == nil {
				kb[strings.TrimSuffix(fields[0], ":")] = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Memory{}, err
	}
	m := Memory{Total: kb["MemTotal"] << 10, Free: kb["MemFree"] << 10, Available: kb["MemAvailable"] << 10}
	if m.Total == 0 {
		return Memory{}, fmt.Errorf("%s/meminfo has no MemTotal", procRoot)
	}
	if _, ok := kb["MemAvailable"]; !ok {
		// Kernels before 3.14: estimate as the old tools did.
		m.Available = (kb["MemFree"] + kb["Buffers"] + kb["Cached"]) << 10
	}
	if m.Available <= m.Total {
		m.Used = m.Total - m.Available
	}
	return m, nil
}

// readUptime parses /proc/uptime, in whole seconds.
func readUptime(procRoot string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, "uptime"))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, fmt.Errorf("%s/uptime is empty", procRoot)
	}
	secs, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, fmt.Errorf("%s/uptime: %w", procRoot, err)
	}
	return uint64(secs), nil
}

// mount is one line of the mount table.
type mount struct {
	device, point string
}

// readMounts parses <procRoot>/self/mounts, undoing its octal escapes
// ("\040" for a space).
func readMounts(procRoot string) ([]mount, error) {
	f, err := os.Open(filepath.Join(procRoot, "self", "mounts"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 {
			out = append(out, mount{device: mountinfo.Unescape(fields[0]), point: mountinfo.Unescape(fields[1])})
		}
	}
	return out, sc.Err()
}

package fingerprint

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fingerprintMemory returns total memory in bytes from /proc/meminfo.
func fingerprintMemory() (uint64, error) {
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: %w", err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("meminfo has no MemTotal")
}

// DiskUsage is the usage of the filesystem holding a path.
type DiskUsage struct {
	TotalBytes, FreeBytes uint64
	UsedPercent           float64
	InodesUsedPercent     float64
}

// Disk statfs's path. Free space counts only what unprivileged users may
// use (Bavail), which is what tasks get.
func Disk(path string) (DiskUsage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return DiskUsage{}, err
	}
	bs := uint64(st.Bsize)
	u := DiskUsage{TotalBytes: st.Blocks * bs, FreeBytes: st.Bavail * bs}
	if st.Blocks > 0 {
		u.UsedPercent = 100 * float64(st.Blocks-st.Bfree) / float64(st.Blocks)
	}
	if st.Files > 0 {
		u.InodesUsedPercent = 100 * float64(st.Files-st.Ffree) / float64(st.Files)
	}
	return u, nil
}

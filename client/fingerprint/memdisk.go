package fingerprint

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/config"
)

// memoryFingerprinter describes memory: MemTotal of procRoot/meminfo.
type memoryFingerprinter struct {
	procRoot string
}

func (f memoryFingerprinter) Fingerprint(_ *config.Config, node *Target) error {
	if mem, err := f.read(); err == nil {
		node.Attributes["memory.totalbytes"] = strconv.FormatUint(mem, 10)
		node.NodeResources.Memory.MemoryMB = int64(mem >> 20)
	}
	return nil
}

// read returns total memory in bytes.
func (f memoryFingerprinter) read() (uint64, error) {
	file, err := os.Open(filepath.Join(f.procRoot, "meminfo"))
	if err != nil {
		return 0, err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
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

// storageFingerprinter describes the filesystem of the data dir, which it
// creates: its size, and the space free to tasks as the node's disk.
type storageFingerprinter struct {
	statfs func(path string) (DiskUsage, error)
}

func (f storageFingerprinter) Fingerprint(cfg *config.Config, node *Target) error {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	if du, err := f.statfs(cfg.DataDir); err == nil {
		node.Attributes["unique.storage.volume"] = cfg.DataDir
		node.Attributes["unique.storage.bytestotal"] = strconv.FormatUint(du.TotalBytes, 10)
		node.Attributes["unique.storage.bytesfree"] = strconv.FormatUint(du.FreeBytes, 10)
		node.NodeResources.Disk.DiskMB = int64(du.FreeBytes >> 20)
	}
	return nil
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

package execinit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/helper/mountinfo"
)

// restrict makes the mount at dst, and every mount below it, nosuid and
// nodev (and read-only when ro): nothing a task can write or reach
// through a bind may hold a device node it could open or a setuid file
// it could gain from. A bind of a host directory brings the host's
// submounts along (MS_REC), and a plain remount would change the top
// mount only, so the change is recursive: mount_setattr(AT_RECURSIVE)
// where the kernel has it (5.12), else each mount found in mountinfo.
func restrict(dst, name string, ro bool) error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if ro {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &attr)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("restrict %s (nosuid, nodev, read-only %v): %w", name, ro, err)
	}
	points, err := mountsUnder(dst)
	if err != nil {
		return fmt.Errorf("restrict %s: %w", name, err)
	}
	for _, p := range points {
		if err := remount(p, ro); err != nil {
			return fmt.Errorf("restrict %s: %w", name, err)
		}
	}
	return nil
}

// remount sets nosuid, nodev (and rdonly) on the one mount at p. A bind
// keeps the flags of its source, which must be repeated on the remount
// (or it fails with EPERM where they are locked), so they are read back.
func remount(p string, ro bool) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", p, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_NOSUID | unix.MS_NODEV)
	if ro {
		flags |= unix.MS_RDONLY
	}
	for _, f := range []uintptr{unix.MS_RDONLY, unix.MS_NOEXEC, unix.MS_NOATIME, unix.MS_RELATIME, unix.MS_NODIRATIME} {
		if uintptr(st.Flags)&f != 0 {
			flags |= f
		}
	}
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s: %w", p, err)
	}
	return nil
}

// mountsUnder lists the mount points at dir and below it, parents first.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	prefix := strings.TrimSuffix(dir, "/") + "/"
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := mountinfo.Unescape(fields[4])
		if p == dir || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	depth := func(p string) int { return strings.Count(strings.TrimSuffix(p, "/"), "/") }
	sort.SliceStable(out, func(i, j int) bool { return depth(out[i]) < depth(out[j]) })
	return out, nil
}

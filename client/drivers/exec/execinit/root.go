package execinit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// setupRoot builds the task's root inside the init's (new, private) mount
// namespace and moves into it with pivot_root. Nothing here is visible
// from the host, and all of it goes away with the namespace.
func setupRoot(s *Spec) error {
	// Nothing mounted from here on may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	root := s.Root
	// pivot_root needs the new root to be a mount point.
	if err := unix.Mount(root, root, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind the task dir %s: %w", root, err)
	}
	// local/, secrets/ and tmp/ are the task's to write: no device node
	// or setuid file made there may work.
	if err := restrict(root, "the task dir", false); err != nil {
		return err
	}
	for _, m := range s.Mounts {
		if err := mount(root, m); err != nil {
			return err
		}
	}
	if err := setupProc(root); err != nil {
		return err
	}
	if err := setupDev(root); err != nil {
		return err
	}
	if err := writeHostname(root, s.Hostname); err != nil {
		return err
	}
	if s.Hostname != "" {
		if err := unix.Sethostname([]byte(s.Hostname)); err != nil {
			return fmt.Errorf("set hostname: %w", err)
		}
	}
	return pivot(root)
}

// target returns root+rel after checking that no existing component of it
// is a symbolic link: the task dir is the task's, and a link a previous
// attempt left there must not move a mount somewhere else.
func target(root, rel string) (string, error) {
	p := root
	for _, part := range strings.Split(strings.Trim(filepath.Clean("/"+rel), "/"), "/") {
		if part == "" {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("mount target %s in the task dir is a symbolic link; remove it", rel)
		}
	}
	return p, nil
}

func mount(root string, m Mount) error {
	dst, err := target(root, m.Target)
	if err != nil {
		return err
	}
	switch m.Kind {
	case MountEtc:
		return mountEtc(dst, m)
	case MountBind:
	default:
		return fmt.Errorf("mount %s: unknown kind %q", m.Target, m.Kind)
	}
	fi, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("chroot source %s: %w", m.Source, err)
	}
	if err := makeTarget(dst, fi.IsDir()); err != nil {
		return err
	}
	if err := unix.Mount(m.Source, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", m.Source, m.Target, err)
	}
	return restrict(dst, m.Target, m.ReadOnly)
}

func makeTarget(dst string, dir bool) error {
	if dir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("mount point %s: %w", dst, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("mount point %s: %w", dst, err)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", dst, err)
	}
	return f.Close()
}

// mountEtc makes dst a small tmpfs holding only the entries of m.Copy
// that exist in m.Source: a task needs to resolve users, hosts and
// libraries and to trust CAs, never to read shadow or sudoers. Files are
// copied (through symbolic links, so a resolv.conf that links outside
// /etc still resolves); directories are bound read-only, which costs a
// mount instead of a copy of hundreds of certificates.
func mountEtc(dst string, m Mount) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("mount point %s: %w", m.Target, err)
	}
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=755,size=16m"); err != nil {
		return fmt.Errorf("tmpfs at %s: %w", m.Target, err)
	}
	for _, name := range m.Copy {
		src := filepath.Join(m.Source, name)
		fi, err := os.Stat(src)
		if err != nil {
			continue
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			err = makeTarget(to, true)
			if err == nil {
				err = unix.Mount(src, to, "", unix.MS_BIND|unix.MS_REC, "")
			}
			if err == nil {
				err = restrict(to, filepath.Join(m.Target, name), true)
			}
		case fi.Mode().IsRegular():
			err = copyFile(src, to, fi.Mode().Perm())
		}
		if err != nil {
			return fmt.Errorf("%s into the task's %s: %w", src, m.Target, err)
		}
	}
	return nil
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeHostname writes /etc/hostname (on the etc tmpfs) when /etc is one.
func writeHostname(root, name string) error {
	if name == "" {
		return nil
	}
	etc := filepath.Join(root, "etc")
	var st unix.Statfs_t
	if err := unix.Statfs(etc, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		return nil
	}
	return os.WriteFile(filepath.Join(etc, "hostname"), []byte(name+"\n"), 0o644)
}

func setupProc(root string) error {
	dst, err := target(root, "/proc")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o555); err != nil {
		return err
	}
	// A fresh proc of the new pid namespace: the task sees its own
	// processes only.
	if err := unix.Mount("proc", dst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return maskProc(dst)
}

// procReadOnly are the parts of /proc that change the host, not the
// task's namespaces (sysctls, sysrq, IRQ affinity, bus devices): a task
// whose uid is 0 (root, or one that holds setuid) could write them.
var procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus"}

// procMasked hide the kernel's memory and keys and what tells of other
// tenants' timing; the files become /dev/null, the directories empty.
var procMasked = []string{"kcore", "keys", "timer_list", "timer_stats", "sched_debug", "latency_stats", "acpi", "scsi"}

func maskProc(proc string) error {
	for _, name := range procReadOnly {
		p := filepath.Join(proc, name)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind /proc/%s: %w", name, err)
		}
		if err := restrict(p, "/proc/"+name, true); err != nil {
			return err
		}
	}
	for _, name := range procMasked {
		p := filepath.Join(proc, name)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=0,mode=555")
		} else {
			err = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
		}
		if err != nil {
			return fmt.Errorf("mask /proc/%s: %w", name, err)
		}
	}
	return nil
}

// devices are bound from the host's /dev into the task's minimal one.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

func setupDev(root string) error {
	dev, err := target(root, "/dev")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	// nodev: a node made here (mknod) does not open; the few bound
	// below are mounts of their own and keep working.
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_STRICTATIME, "mode=755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, name := range devices {
		dst := filepath.Join(dev, name)
		if err := makeTarget(dst, false); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+name, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", name, err)
		}
	}
	pts := filepath.Join(dev, "pts")
	if err := os.Mkdir(pts, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	shm := filepath.Join(dev, "shm")
	if err := os.Mkdir(shm, 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("shm", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	for link, to := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(to, filepath.Join(dev, link)); err != nil {
			return err
		}
	}
	return nil
}

// pivot makes root the root of the mount namespace and detaches the old
// one, so that nothing of the host's tree stays reachable (chroot alone
// can be escaped by a process with CAP_SYS_CHROOT).
func pivot(root string) error {
	if err := unix.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root to %s: %w", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	return unix.Chdir("/")
}

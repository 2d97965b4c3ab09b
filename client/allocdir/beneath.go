package allocdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Writing into the alloc dir while tasks run. Tasks of the alloc share
// alloc/data and alloc/tmp (mode 1777) and own their local/, secrets/ and
// tmp/, so any of them may swap a directory for a symlink at any moment,
// also between a check and the write it guards. The client's writes there
// (artifacts, templates, markers) therefore go through directory
// descriptors opened one component at a time with O_NOFOLLOW: a symlink
// anywhere on the way fails the open instead of leading the client, as
// root, out of the alloc dir or into a place the task chose.

// ErrSymlink is a path that holds a symlink where the client writes
// only through directories. It is an ErrPathEscapes: the symlink could
// lead anywhere.
var ErrSymlink = fmt.Errorf("%w: a symlink lies on the way (the client writes only through real directories)", ErrPathEscapes)

// OpenDir opens rel, a directory relative to the alloc dir, following no
// symlink on the way; with create, missing directories are made with mode
// (less the umask), owned by the client.
func (a *AllocDir) OpenDir(rel string, create bool, mode os.FileMode) (*os.File, error) {
	root, err := os.Open(a.Root)
	if err != nil {
		return nil, fmt.Errorf("alloc dir: %w", err)
	}
	defer root.Close()
	return OpenDirAt(root, rel, create, mode)
}

// OpenDirAt opens rel beneath dir as OpenDir does; dir stays open and
// "." opens dir again.
func OpenDirAt(dir *os.File, rel string, create bool, mode os.FileMode) (*os.File, error) {
	clean := filepath.Clean(rel)
	if !filepath.IsLocal(clean) {
		return nil, fmt.Errorf("%q: %w", rel, ErrPathEscapes)
	}
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir.Name(), err)
	}
	name := dir.Name()
	for _, c := range strings.Split(clean, string(filepath.Separator)) {
		if c == "." {
			continue
		}
		next, err := openChild(fd, c, create, mode)
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(name, c), err)
		}
		fd, name = next, filepath.Join(name, c)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openChild opens directory name in dir, never through a symlink,
// creating it first when asked to.
func openChild(dir int, name string, create bool, mode os.FileMode) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dir, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err := unix.Mkdirat(dir, name, uint32(mode.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		fd, err = unix.Openat(dir, name, flags, 0)
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		if isSymlinkAt(dir, name) {
			return -1, ErrSymlink
		}
	}
	return fd, err
}

func isSymlinkAt(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// LstatAt is what name in dir is, not following a symlink.
func LstatAt(dir *os.File, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// RemoveAllAt removes name in dir and everything under it; a symlink is
// removed itself, never followed. A missing name is not an error.
func RemoveAllAt(dir *os.File, name string) error {
	st, err := LstatAt(dir, name)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(int(dir.Fd()), name, 0)
	}
	// os.Root confines RemoveAll beneath dir, whatever the tree holds.
	r, err := os.OpenRoot(fmt.Sprintf("/proc/self/fd/%d", dir.Fd()))
	if err != nil {
		return err
	}
	defer r.Close()
	return r.RemoveAll(name)
}

// WriteFileAt writes data to name in dir, replacing a file there; a
// symlink at name is removed, never written through.
func WriteFileAt(dir *os.File, name string, data []byte, perm os.FileMode) error {
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(int(dir.Fd()), name, flags, uint32(perm.Perm()))
	if errors.Is(err, unix.ELOOP) {
		if err = unix.Unlinkat(int(dir.Fd()), name, 0); err == nil {
			fd, err = unix.Openat(int(dir.Fd()), name, flags|unix.O_EXCL, uint32(perm.Perm()))
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir.Name(), name), err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name))
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/taskuser"
)

// place moves the staged download (name staged in the directory stage)
// to dest, a path relative to the alloc dir. A file replaces what is at
// dest; a directory's contents are merged into dest, replacing files of
// the same name, as go-getter does when it writes in place.
//
// The alloc's tasks may be running (sidecars, earlier tasks) and can
// swap any directory they write for a symlink at any time, so nothing is
// looked up by path: dest is opened one directory at a time without
// following symlinks (allocdir.OpenDir), and every step works on
// descriptors. A symlink on the way fails the placement; one at a name
// being replaced is removed, never followed.
func place(a *allocdir.AllocDir, stage *os.File, staged, dest string, file bool) error {
	if file {
		parent, name := filepath.Split(filepath.Clean(dest))
		if name == "" || name == "." {
			return fmt.Errorf("destination %s names no file", dest)
		}
		dir, err := a.OpenDir(parent, true, 0o755)
		if err != nil {
			return err
		}
		defer dir.Close()
		if st, err := allocdir.LstatAt(dir, name); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return fmt.Errorf("destination %s is a directory, and mode \"file\" writes a file there (name the file in destination)", dest)
		}
		return replaceAt(stage, staged, dir, name)
	}
	dir, err := a.OpenDir(dest, true, 0o755)
	if err != nil {
		return err
	}
	defer dir.Close()
	src, err := allocdir.OpenDirAt(stage, staged, false, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	return merge(src, dir)
}

func merge(src, dst *os.File) error {
	entries, err := src.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, e := range entries {
		st, err := allocdir.LstatAt(dst, e.Name())
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && e.IsDir() {
			if err := mergeChild(src, dst, e.Name()); err != nil {
				return err
			}
			continue
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		if err := replaceAt(src, e.Name(), dst, e.Name()); err != nil {
			return err
		}
	}
	return nil
}

func mergeChild(src, dst *os.File, name string) error {
	from, err := allocdir.OpenDirAt(src, name, false, 0)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := allocdir.OpenDirAt(dst, name, false, 0)
	if err != nil {
		return err
	}
	defer to.Close()
	return merge(from, to)
}

// replaceAt renames from in fromDir to to in toDir, removing what was at
// to first. Should a task put something back in between, the rename
// replaces a file or symlink itself and fails on a non-empty directory:
// it never writes through what the task put there.
func replaceAt(fromDir *os.File, from string, toDir *os.File, to string) error {
	if err := allocdir.RemoveAllAt(toDir, to); err != nil {
		return err
	}
	if err := unix.Renameat(int(fromDir.Fd()), from, int(toDir.Fd()), to); err != nil {
		return fmt.Errorf("place %s: %w", filepath.Join(toDir.Name(), to), err)
	}
	return nil
}

// chown gives the fetched files to the task's user, as Nomad does for an
// artifact with chown = true: owner's ids when the task runner resolved
// the user, else username looked up on the host. Only root can; a client
// running as another user leaves them as they are. root is the staging
// directory, the client's alone.
func chown(root, username string, owner *taskuser.User) error {
	if os.Geteuid() != 0 {
		return nil
	}
	var uid, gid int
	if owner != nil {
		uid, gid = owner.UID, owner.GID
	} else {
		u, err := user.Lookup(username)
		if err != nil {
			return fmt.Errorf("chown to %q: %w", username, err)
		}
		var err1, err2 error
		uid, err1 = strconv.Atoi(u.Uid)
		gid, err2 = strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("chown to %q: user has a non-numeric id %s:%s", username, u.Uid, u.Gid)
		}
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

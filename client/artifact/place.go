package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// place moves a staged download to its destination. A file replaces what
// is at dest; a directory's contents are merged into dest, replacing files
// of the same name, as go-getter does when it writes in place. Names that
// already exist in dest as symlinks are replaced, never followed.
func place(staged, dest string, file bool) error {
	if file {
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return err
		}
		if fi, err := os.Lstat(dest); err == nil && fi.IsDir() {
			return fmt.Errorf("destination %s is a directory, and mode \"file\" writes a file there (name the file in destination)", dest)
		}
		return replace(staged, dest)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	return merge(staged, dest)
}

func merge(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		fi, err := os.Lstat(to)
		if err == nil && fi.IsDir() && e.IsDir() {
			if err := merge(from, to); err != nil {
				return err
			}
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := replace(from, to); err != nil {
			return err
		}
	}
	return nil
}

// replace renames from to to, removing what was at to first.
func replace(from, to string) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// chown gives the fetched files to the task's user, as Nomad does for an
// artifact with chown = true. Only root can; a client running as another
// user leaves them as they are.
func chown(root, username string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(username)
	if err != nil {
		return fmt.Errorf("chown to %q: %w", username, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("chown to %q: user has a non-numeric id %s:%s", username, u.Uid, u.Gid)
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

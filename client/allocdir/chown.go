package allocdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// chownFrom gives every entry under dir that belongs to uid from to
// uid:gid, through descriptors: no symlink is followed (a symlink is
// chowned itself), and a directory is entered only by an O_NOFOLLOW open
// of the entry just checked. Entries of other users are left as they
// are, and so is a directory of another user with all it holds. A
// regular file with more than one link is skipped: it may be a hard link
// to a file outside the task's directories, which must not change owner.
func chownFrom(dir *os.File, from, uid, gid int) error {
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir.Name(), err)
	}
	for _, e := range entries {
		name := e.Name()
		st, err := LstatAt(dir, name)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", filepath.Join(dir.Name(), name), err)
		}
		if int(st.Uid) != from {
			continue
		}
		kind := st.Mode & unix.S_IFMT
		if kind == unix.S_IFREG && st.Nlink > 1 {
			continue
		}
		if err := unix.Fchownat(int(dir.Fd()), name, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("chown %s: %w", filepath.Join(dir.Name(), name), err)
		}
		if kind != unix.S_IFDIR {
			continue
		}
		sub, err := OpenDirAt(dir, name, false, 0)
		if err != nil {
			return err
		}
		err = chownFrom(sub, from, uid, gid)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

package dirperm

import (
	"fmt"
	"os"
)

// Modes of the agent's directories, from the most closed to the most open.
const (
	// Private is for directories only the agent may enter: the client's
	// state dir, the server's data dir and raft dir.
	Private os.FileMode = 0o700
	// Traverse is for directories a task's user must pass through to
	// reach its own alloc dir but may not list: the client's data dir
	// and the alloc base.
	Traverse os.FileMode = 0o711
)

// Ensure makes dir a directory with exactly mode, creating it and any
// missing parent (0755, as MkdirAll does) if needed. An existing directory
// is chmod-ed to mode, so a looser one is tightened. A path that is not a
// directory (or is a symlink) is refused: the agent's secrets must not be
// written where someone else pointed it.
func Ensure(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (it is %s): remove it or choose another data_dir", dir, fi.Mode().Type())
	}
	if fi.Mode().Perm() != mode || fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
		if err := os.Chmod(dir, mode); err != nil {
			return fmt.Errorf("set mode %#o on %s: %w", mode, dir, err)
		}
	}
	return nil
}

package executor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/drover-sched/drover/client/drivers"
)

// makeExecutable sets the execute bits of a task's command when it is a
// regular file inside the alloc dir without them, as Nomad does: a program
// an artifact downloaded as a plain file (not from an archive, which keeps
// modes) arrives as 0644, and `command = "local/tool"` is expected to run
// it. Files outside the alloc dir, the host's own programs, are never
// touched.
//
// Tasks of the alloc may be running and can swap the path for a symlink
// at any moment, so the file is opened through an os.Root of the alloc
// dir (no symlink may lead out of it) and its mode read and changed
// through that one descriptor: the file checked is the file changed.
// O_NONBLOCK keeps a FIFO planted there from holding the start.
func makeExecutable(path string, cfg *drivers.TaskConfig) error {
	root := cfg.AllocDir
	if root == "" {
		root = cfg.TaskDir
	}
	if root == "" || !within(root, path) {
		return nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil // missing, or leads out of the alloc dir: a missing command fails at start with its own error
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 != 0 {
		return nil
	}
	return f.Chmod(fi.Mode().Perm() | 0o111)
}

// within reports whether path is root or below it, lexically.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

package executor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/client/drivers"
)

// makeExecutable sets the execute bits of a task's command when it is a
// regular file inside the alloc dir without them, as Nomad does: a program
// an artifact downloaded as a plain file (not from an archive, which keeps
// modes) arrives as 0644, and `command = "local/tool"` is expected to run
// it. Files outside the alloc dir, the host's own programs, are never
// touched.
func makeExecutable(path string, cfg *drivers.TaskConfig) error {
	root := cfg.AllocDir
	if root == "" {
		root = cfg.TaskDir
	}
	if root == "" || !within(root, path) {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 != 0 {
		return nil // a missing command fails at start with its own error
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !within(root, real) {
		return nil
	}
	return os.Chmod(real, fi.Mode().Perm()|0o111)
}

// within reports whether path is root or below it, lexically.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

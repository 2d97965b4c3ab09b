package allocdir

import (
	"fmt"
	"os"
	"path/filepath"
)

// AllocDir is one allocation's directory tree.
type AllocDir struct {
	// Root is <base>/<alloc_id>.
	Root string
	// SharedDir is Root/alloc.
	SharedDir string
	// LogDir is Root/alloc/logs.
	LogDir string
}

// TaskDir is one task's part of the tree.
type TaskDir struct {
	Dir        string
	LocalDir   string
	SecretsDir string
	TmpDir     string
}

// New returns the layout of allocID under base; nothing is created yet.
func New(base, allocID string) *AllocDir {
	root := filepath.Join(base, allocID)
	shared := filepath.Join(root, "alloc")
	return &AllocDir{Root: root, SharedDir: shared, LogDir: filepath.Join(shared, "logs")}
}

// Task returns the layout of a task's directory.
func (a *AllocDir) Task(name string) TaskDir {
	dir := filepath.Join(a.Root, name)
	return TaskDir{Dir: dir, LocalDir: filepath.Join(dir, "local"), SecretsDir: filepath.Join(dir, "secrets"), TmpDir: filepath.Join(dir, "tmp")}
}

// Build creates the shared directories and one directory per task. It is
// safe to call again on an existing tree (a restarted client does).
func (a *AllocDir) Build(tasks []string) error {
	dirs := []string{a.SharedDir, filepath.Join(a.SharedDir, "data"), filepath.Join(a.SharedDir, "tmp"), a.LogDir}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("alloc dir: %w", err)
		}
	}
	// The shared tmp is world-writable like /tmp, for tasks run as other users.
	_ = os.Chmod(filepath.Join(a.SharedDir, "tmp"), 0o1777)
	for _, t := range tasks {
		td := a.Task(t)
		for _, d := range []string{td.Dir, td.LocalDir, td.TmpDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("task dir %s: %w", t, err)
			}
		}
		if err := os.MkdirAll(td.SecretsDir, 0o700); err != nil {
			return fmt.Errorf("task dir %s: %w", t, err)
		}
	}
	return nil
}

// Destroy removes the tree.
func (a *AllocDir) Destroy() error {
	if err := os.RemoveAll(a.Root); err != nil {
		return fmt.Errorf("remove alloc dir %s: %w", a.Root, err)
	}
	return nil
}

// Exists reports whether the tree is on disk.
func (a *AllocDir) Exists() bool {
	_, err := os.Stat(a.Root)
	return err == nil
}

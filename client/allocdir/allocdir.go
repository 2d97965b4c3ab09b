package allocdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/helper/dirperm"
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

// Modes of the tree (the package doc says who may reach what).
const (
	// modeTraverse: the alloc root and each task's directory. A task's
	// user passes through to its own directories but lists nothing.
	modeTraverse os.FileMode = 0o711
	// modeShared: alloc/ and alloc/logs, readable by the alloc's tasks
	// (a log shipper reads its siblings' logs) and written only by the
	// client.
	modeShared os.FileMode = 0o755
	// modeSharedRW: alloc/data and alloc/tmp, written by every task of
	// the alloc, whatever its user; the sticky bit keeps one user from
	// removing another's files.
	modeSharedRW os.FileMode = 0o777 | os.ModeSticky
	// modeOwn: a task's local/, secrets/ and tmp/ once they belong to
	// the task's user (TaskDir.Chown).
	modeOwn os.FileMode = 0o700
)

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
// safe to call again on an existing tree (a restarted client does): the
// directories the client alone owns get their modes back every time, and
// a task's own directories keep the owner and mode Chown gave them.
func (a *AllocDir) Build(tasks []string) error {
	always := []struct {
		dir  string
		mode os.FileMode
	}{
		{a.Root, modeTraverse}, {a.SharedDir, modeShared}, {a.LogDir, modeShared},
		{filepath.Join(a.SharedDir, "data"), modeSharedRW}, {filepath.Join(a.SharedDir, "tmp"), modeSharedRW},
	}
	for _, t := range tasks {
		always = append(always, struct {
			dir  string
			mode os.FileMode
		}{a.Task(t).Dir, modeTraverse})
	}
	for _, d := range always {
		if err := dirperm.Ensure(d.dir, d.mode); err != nil {
			return fmt.Errorf("alloc dir: %w", err)
		}
	}
	for _, t := range tasks {
		td := a.Task(t)
		// Until Chown gives them to the task's user they are the
		// client's: a task run as the client's user (raw_exec) writes
		// them, and secrets/ is never open to others.
		for _, d := range []struct {
			dir  string
			mode os.FileMode
		}{{td.LocalDir, 0o755}, {td.TmpDir, 0o755}, {td.SecretsDir, modeOwn}} {
			if err := mkdirOnce(d.dir, d.mode); err != nil {
				return fmt.Errorf("task dir %s: %w", t, err)
			}
		}
	}
	return nil
}

// mkdirOnce creates dir with exactly mode (whatever the umask) if it is
// missing, and leaves an existing one as it is.
func mkdirOnce(dir string, mode os.FileMode) error {
	err := os.Mkdir(dir, mode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.Chmod(dir, mode)
}

// Chown gives the task's own directories (local/, secrets/, tmp/) to the
// user the task runs as, mode 0700: the task writes them, no other user
// reads them. The task runner calls it before every start of a task
// whose driver isolates it and runs it as another user; the files the
// client then writes there (payload, artifacts, templates) get their own
// chown.
//
// When a directory belonged to another user (the job's `user` changed
// between versions), what that user left inside is given to the new one
// too (chownFrom), or the task could not change its own files.
func (t TaskDir) Chown(uid, gid int) error {
	parent, err := os.Open(t.Dir)
	if err != nil {
		return fmt.Errorf("task dir: %w", err)
	}
	defer parent.Close()
	for _, d := range []string{t.LocalDir, t.SecretsDir, t.TmpDir} {
		if err := chownDir(parent, filepath.Base(d), uid, gid); err != nil {
			return fmt.Errorf("task dir: %w", err)
		}
	}
	return nil
}

// chownDir gives the directory name in parent to uid:gid, mode 0700,
// and its contents as well when it was another user's.
func chownDir(parent *os.File, name string, uid, gid int) error {
	dir, err := OpenDirAt(parent, name, false, 0)
	if err != nil {
		return err
	}
	defer dir.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &st); err != nil {
		return &os.PathError{Op: "stat", Path: dir.Name(), Err: err}
	}
	if int(st.Uid) != uid {
		if err := chownFrom(dir, int(st.Uid), uid, gid); err != nil {
			return err
		}
	}
	if err := dir.Chown(uid, gid); err != nil {
		return err
	}
	return dir.Chmod(modeOwn)
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

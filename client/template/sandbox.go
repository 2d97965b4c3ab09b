package template

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/allocdir"
)

// ErrPathEscapes is a source, destination or file() path that leads
// outside the task directory and the alloc's shared directory.
var ErrPathEscapes = errors.New("path escapes the task directory and the alloc's shared directory")

// maxReadSize bounds a template source or a file() read, and maxOutput a
// rendered template, so that a mistaken path or loop cannot exhaust the
// client's memory.
const (
	maxReadSize = 16 << 20
	maxOutput   = 64 << 20
)

// sandbox is where a task's templates may read and write: the task's own
// directory and the alloc's shared directory, as Nomad allows. Paths are
// checked on the descriptors the kernel opened (through /proc/self/fd),
// so a symlink placed by the task cannot lead a render elsewhere, and a
// directory swapped for a symlink after the check cannot either: every
// step below works relative to a descriptor already checked.
type sandbox struct {
	taskDir, sharedDir   string // as configured, for lexical checks
	realTask, realShared string // symlinks resolved, for descriptor checks
}

func newSandbox(taskDir, sharedDir string) (*sandbox, error) {
	s := &sandbox{taskDir: filepath.Clean(taskDir), sharedDir: filepath.Clean(sharedDir)}
	var err error
	if s.realTask, err = filepath.EvalSymlinks(s.taskDir); err != nil {
		return nil, fmt.Errorf("task directory: %w", err)
	}
	if s.realShared, err = filepath.EvalSymlinks(s.sharedDir); err != nil {
		return nil, fmt.Errorf("alloc shared directory: %w", err)
	}
	return s, nil
}

// within reports whether p is root or lies under it, lexically.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

func (s *sandbox) escapes(p string) bool {
	return !within(s.taskDir, p) && !within(s.sharedDir, p)
}

// clientPath makes an interpolated path absolute the way Nomad does: a
// relative path starts at the task directory, and with joinEscape (for
// destinations) an absolute path outside the sandbox is taken as relative
// to the task directory too. It reports whether the result still escapes.
func (s *sandbox) clientPath(p string, joinEscape bool) (string, bool) {
	if !filepath.IsAbs(p) || (joinEscape && s.escapes(filepath.Clean(p))) {
		p = filepath.Join(s.taskDir, p)
	}
	p = filepath.Clean(p)
	return p, s.escapes(p)
}

// relTo returns the sandbox root that lexically holds p, its real path,
// and p relative to it.
func (s *sandbox) relTo(p string) (root, real, rel string, err error) {
	for _, r := range [][2]string{{s.taskDir, s.realTask}, {s.sharedDir, s.realShared}} {
		if within(r[0], p) {
			rel, _ = filepath.Rel(r[0], p)
			return r[0], r[1], rel, nil
		}
	}
	return "", "", "", fmt.Errorf("%q: %w", p, ErrPathEscapes)
}

// checkFD makes sure the descriptor fd lies inside the sandbox.
func (s *sandbox) checkFD(fd int, p string) error {
	real, err := os.Readlink(procFD(fd))
	if err != nil {
		return fmt.Errorf("%q: %w", p, err)
	}
	if !within(s.realTask, real) && !within(s.realShared, real) {
		return fmt.Errorf("%q: %w (it leads to %s)", p, ErrPathEscapes, real)
	}
	return nil
}

// checkWriteFD is checkFD for a directory a render writes into, which
// must not be one of the client's own places either; it returns the
// directory's real path.
func (s *sandbox) checkWriteFD(fd int, p string) (string, error) {
	if err := s.checkFD(fd, p); err != nil {
		return "", err
	}
	real, err := os.Readlink(procFD(fd))
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	if s.clientOnly(real) {
		return "", fmt.Errorf("%q: %w", p, allocdir.ErrReserved)
	}
	return real, nil
}

// clientOnly reports whether real, a resolved path in the sandbox, is or
// lies under one of the client's own places (allocdir.Reserved): a
// task's artifact markers or staging directories, or the alloc's logs.
func (s *sandbox) clientOnly(real string) bool {
	if rel, err := filepath.Rel(s.realTask, real); err == nil && filepath.IsLocal(rel) {
		return allocdir.ClientOnlyTaskEntry(strings.SplitN(rel, string(filepath.Separator), 2)[0])
	}
	return within(filepath.Join(s.realShared, "logs"), real)
}

// taskWritable reports whether real, a resolved directory, is or lies
// under a directory the task writes itself (allocdir.TaskWritableDirs,
// SharedWritableDirs).
func (s *sandbox) taskWritable(real string) bool {
	for _, d := range allocdir.TaskWritableDirs {
		if within(filepath.Join(s.realTask, d), real) {
			return true
		}
	}
	for _, d := range allocdir.SharedWritableDirs {
		if within(filepath.Join(s.realShared, d), real) {
			return true
		}
	}
	return false
}

// readFile reads a regular file of the sandbox; p must be absolute.
func (s *sandbox) readFile(p string) ([]byte, error) {
	if s.escapes(p) {
		return nil, fmt.Errorf("%q: %w", p, ErrPathEscapes)
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	if err := s.checkFD(fd, p); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	// Only a regular file is opened for reading: a FIFO would block the
	// start, a device might act on open.
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%q is not a regular file", p)
	}
	rfd, err := unix.Open(procFD(fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(rfd), p)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReadSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", p, err)
	}
	if len(data) > maxReadSize {
		return nil, fmt.Errorf("%q is larger than %d MiB", p, maxReadSize>>20)
	}
	return data, nil
}

// fileMode is how a rendered file is written.
type fileMode struct {
	perms    os.FileMode
	uid, gid int // -1: leave as the client's
	// dirUID and dirGID own the parent directories the write creates;
	// -1 leaves them the client's.
	dirUID, dirGID int
}

// writeFile writes data to the sandbox path p atomically (a temporary file
// in the same directory, renamed over p), creating missing parent
// directories. A symlink at p itself is replaced, never followed.
func (s *sandbox) writeFile(p string, data []byte, m fileMode) error {
	root, realRoot, rel, err := s.relTo(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("%q is a directory", p)
	}
	dfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer func() { unix.Close(dfd) }()
	if real, err := os.Readlink(procFD(dfd)); err != nil || real != realRoot {
		return fmt.Errorf("%q: %w (its directory moved)", p, ErrPathEscapes)
	}
	dir, base := filepath.Split(rel)
	walked, walkedReal := root, realRoot
	for _, comp := range strings.Split(filepath.Clean(dir), string(filepath.Separator)) {
		if comp == "." || comp == "" {
			continue
		}
		walked = filepath.Join(walked, comp)
		if s.clientOnly(filepath.Join(walkedReal, comp)) {
			return fmt.Errorf("%q: %w", p, allocdir.ErrReserved)
		}
		err := unix.Mkdirat(dfd, comp, 0o755)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return &os.PathError{Op: "mkdir", Path: walked, Err: err}
		}
		// Only a directory made where the task writes anyway is given
		// to it: one in the task directory's root or in alloc/ would
		// hand the task a place the client trusts.
		if err == nil && (m.dirUID >= 0 || m.dirGID >= 0) && s.taskWritable(walkedReal) {
			if err := unix.Fchownat(dfd, comp, m.dirUID, m.dirGID, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return &os.PathError{Op: "chown", Path: walked, Err: err}
			}
		}
		nfd, err := unix.Openat(dfd, comp, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: walked, Err: err}
		}
		unix.Close(dfd)
		dfd = nfd
		if walkedReal, err = s.checkWriteFD(dfd, walked); err != nil {
			return err
		}
	}
	if s.clientOnly(filepath.Join(walkedReal, base)) {
		return fmt.Errorf("%q: %w", p, allocdir.ErrReserved)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + base + ".render-" + hex.EncodeToString(rnd[:])
	ffd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(walked, tmp), Err: err}
	}
	f := os.NewFile(uintptr(ffd), filepath.Join(walked, tmp))
	werr := func() error {
		if _, err := f.Write(data); err != nil {
			return err
		}
		if m.uid >= 0 || m.gid >= 0 {
			if err := f.Chown(m.uid, m.gid); err != nil {
				return err
			}
		}
		// Only permission bits: fileModeOf never sets the set-id bits
		// and Chmod must not be handed any.
		return f.Chmod(m.perms & os.ModePerm)
	}()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, base)
	}
	if werr != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("write %q: %w", p, werr)
	}
	return nil
}

// procFD names a descriptor of this process by path.
func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

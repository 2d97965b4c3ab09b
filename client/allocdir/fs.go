package allocdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Reading the alloc dir for a user (`alloc fs`). Paths are relative to the
// alloc dir; a leading "/" names the alloc dir itself, as Nomad's tools
// send ("/", "/alloc/logs"). Nothing outside the alloc dir may be reached:
// not with "..", and not through a symlink a task made; nor may a task's
// secrets directory, as in Nomad. The check is done
// on what the kernel actually opened, not on the path text: the path is
// opened with O_PATH (which follows symlinks but reads nothing, so a FIFO
// or a device is never really opened), and /proc/self/fd tells where the
// descriptor points. A task that swaps a directory for a symlink between
// a check and a use therefore cannot win a race.

// Errors of the file reads. Each wraps into a message naming the path.
var (
	// ErrPathEscapes is a path that leads outside the alloc dir.
	ErrPathEscapes = errors.New("path escapes the alloc directory")
	// ErrNotDir is a listing of something that is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrNotRegular is a read of something that is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrSecretsDir is a path in (or leading into) a task's secrets
	// directory, which only the task may read.
	ErrSecretsDir = errors.New("reading a task's secrets directory is not allowed")
)

// FileInfo describes one file or directory of the alloc dir.
type FileInfo struct {
	Name    string
	IsDir   bool
	Size    int64
	Mode    fs.FileMode
	ModTime time.Time
	// ContentType is sniffed from the first bytes of a regular file (by
	// Stat only); empty otherwise.
	ContentType string
}

func fileInfo(fi fs.FileInfo) FileInfo {
	return FileInfo{Name: fi.Name(), IsDir: fi.IsDir(), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
}

// List lists a directory of the alloc dir, sorted by name. Entries are
// described as they are (a symlink as a symlink), never followed.
func (a *AllocDir) List(p string) ([]FileInfo, error) {
	f, fi, err := a.open(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w (read it instead)", p, ErrNotDir)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	out := make([]FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // removed since it was listed
		}
		out = append(out, fileInfo(info))
	}
	// File.ReadDir returns directory order; users expect names sorted.
	slices.SortFunc(out, func(x, y FileInfo) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

// Stat describes one file or directory of the alloc dir, following
// symlinks that stay inside it.
func (a *AllocDir) Stat(p string) (FileInfo, error) {
	fd, real, err := a.resolve(p)
	if err != nil {
		return FileInfo{}, err
	}
	defer unix.Close(fd)
	fi, err := os.Stat(procFD(fd))
	if err != nil {
		return FileInfo{}, fmt.Errorf("stat %s: %w", p, err)
	}
	out := fileInfo(fi)
	out.Name = filepath.Base(strings.TrimSuffix(real, " (deleted)"))
	if fi.Mode().IsRegular() {
		if f, err := reopen(fd, unix.O_RDONLY); err == nil {
			buf := make([]byte, 512)
			n, _ := io.ReadFull(f, buf)
			f.Close()
			out.ContentType = http.DetectContentType(buf[:n])
		}
	}
	return out, nil
}

// Open opens a regular file of the alloc dir for reading.
func (a *AllocDir) Open(p string) (*os.File, error) {
	f, fi, err := a.open(p, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, fmt.Errorf("%s: %w: it is a directory (list it instead)", p, ErrNotRegular)
		}
		return nil, fmt.Errorf("%s: %w (it is %s)", p, ErrNotRegular, fi.Mode().Type())
	}
	return f, nil
}

// open resolves p and opens what it names with flags. A non-regular file
// other than a directory is described but not opened (a FIFO's reader
// would steal a task's log output; a device may act on open).
func (a *AllocDir) open(p string, flags int) (*os.File, fs.FileInfo, error) {
	fd, _, err := a.resolve(p)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(fd)
	fi, err := os.Stat(procFD(fd))
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, fi, fmt.Errorf("%s: %w (it is %s)", p, ErrNotRegular, fi.Mode().Type())
	}
	if flags&unix.O_DIRECTORY != 0 && !fi.IsDir() {
		return nil, fi, fmt.Errorf("%s: %w (read it instead)", p, ErrNotDir)
	}
	f, err := reopen(fd, flags)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", p, err)
	}
	return f, fi, nil
}

// resolve opens p with O_PATH and checks that the descriptor lies inside
// the alloc dir. It returns the descriptor and the real path it names.
func (a *AllocDir) resolve(p string) (int, string, error) {
	rel := strings.TrimLeft(p, "/")
	if rel == "" {
		rel = "."
	}
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) {
		return -1, "", fmt.Errorf("%q: %w", p, ErrPathEscapes)
	}
	root, err := filepath.EvalSymlinks(a.Root)
	if err != nil {
		return -1, "", fmt.Errorf("alloc dir: %w", err)
	}
	fd, err := unix.Open(filepath.Join(root, rel), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: p, Err: err}
	}
	real, err := os.Readlink(procFD(fd))
	if err == nil && real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		err = fmt.Errorf("%q: %w (it leads to a symlink's target outside)", p, ErrPathEscapes)
	}
	if err == nil && inSecretsDir(strings.TrimPrefix(real, root)) {
		err = fmt.Errorf("%q: %w", p, ErrSecretsDir)
	}
	if err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	return fd, real, nil
}

// inSecretsDir reports whether rel, a real path relative to the alloc dir,
// is a task's secrets directory (<task>/secrets) or lies inside one. Like
// Nomad, Drover keeps NOMAD_SECRETS_DIR out of `alloc fs`: it holds what
// only the task should see. The check is on the opened path, so a symlink
// into the secrets directory is refused too.
func inSecretsDir(rel string) bool {
	parts := strings.SplitN(strings.TrimPrefix(rel, string(filepath.Separator)), string(filepath.Separator), 3)
	if len(parts) < 2 || parts[0] == "alloc" {
		return false
	}
	return strings.TrimSuffix(parts[1], " (deleted)") == "secrets"
}

// procFD names a descriptor of this process by path, which re-opens the
// very file the descriptor holds, whatever happened to its name since.
func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// reopen opens the file the O_PATH descriptor fd holds. The File is named
// after its own descriptor, so that what is looked up through its name (a
// directory entry's Info) is looked up in that very directory.
func reopen(fd, flags int) (*os.File, error) {
	nfd, err := unix.Open(procFD(fd), flags|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), procFD(nfd)), nil
}

package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"syscall"

	getter "github.com/hashicorp/go-getter/v2"
)

// localGetter is go-getter's Getter for file:// sources (absolute paths
// become file:// URLs in address), in place of go-getter's FileGetter,
// which reads any path the agent can and copies a file with the process
// umask's permissions (so /etc/shadow would arrive world-readable).
//
// Here a path is read only from inside one of roots (the allocation's
// directory first, then the directories Sources.LocalPaths names; "/" with
// Sources.AnyLocalPath), through an os.Root: the kernel resolves each
// component inside that directory, so no symlink on the way (nor an
// absolute one) and no ".." can lead out of it, even if the files change
// while they are read. A path is judged by its clean form, so ".." is
// taken lexically first. A copied file keeps its permission bits, less
// setuid and setgid, so a copy is never readable by more users than the
// original; directories are copied whole (their symlinks as they are,
// checked afterwards like an archive's), within the same bounds as a
// download.
type localGetter struct {
	roots    []string
	files    []string
	anyPath  bool
	maxBytes int64
	maxFiles int
}

var _ getter.Getter = (*localGetter)(nil)

// Detect claims file:// URLs, and nothing else even when forced ("file::"
// on an http URL is no local file).
func (g *localGetter) Detect(req *getter.Request) (bool, error) {
	if req.Forced != "" && req.Forced != "file" {
		return false, nil
	}
	u, err := url.Parse(req.Src)
	return err == nil && u.Scheme == "file", nil
}

func (g *localGetter) Mode(_ context.Context, u *url.URL) (getter.Mode, error) {
	root, rel, err := g.open(u)
	if err != nil {
		return getter.ModeInvalid, err
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	if err != nil {
		return getter.ModeInvalid, g.readErr(u.Path, root, err)
	}
	if fi.IsDir() {
		return getter.ModeDir, nil
	}
	return getter.ModeFile, nil
}

func (g *localGetter) GetFile(ctx context.Context, req *getter.Request) error {
	u := req.URL()
	root, rel, err := g.open(u)
	if err != nil {
		return err
	}
	defer root.Close()
	src, err := root.Open(rel)
	if err != nil {
		return g.readErr(u.Path, root, err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("source %s is a directory, and mode \"file\" fetches a file", u.Path)
	}
	b := newCopyBudget(g.maxBytes, 1)
	return copyFile(ctx, req.Dst, src, fi, req.Umask, b)
}

func (g *localGetter) Get(ctx context.Context, req *getter.Request) error {
	u := req.URL()
	root, rel, err := g.open(u)
	if err != nil {
		return err
	}
	defer root.Close()
	sub, err := root.OpenRoot(rel)
	if err != nil {
		return g.readErr(u.Path, root, err)
	}
	defer sub.Close()
	fi, err := sub.Stat(".")
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("source %s is a file, and mode \"dir\" fetches a directory", u.Path)
	}
	if err := os.MkdirAll(req.Dst, 0o700); err != nil {
		return err
	}
	b := newCopyBudget(g.maxBytes, g.maxFiles)
	if err := copyTree(ctx, sub, ".", req.Dst, req.Umask, b); err != nil {
		return err
	}
	return os.Chmod(req.Dst, dirMode(fi, req.Umask))
}

// open finds the root u's path lies in and opens it; rel is the path
// inside it.
func (g *localGetter) open(u *url.URL) (*os.Root, string, error) {
	if u.Scheme != "file" {
		return nil, "", fmt.Errorf("%w: %q is not a file:// URL", ErrUnsupportedSource, u.Redacted())
	}
	if u.Host != "" && u.Host != "localhost" {
		return nil, "", fmt.Errorf("%w: %q names the host %q; a local file is written file:///path", ErrUnsupportedSource, u.Redacted(), u.Host)
	}
	if u.Opaque != "" || !filepath.IsAbs(u.Path) {
		return nil, "", fmt.Errorf("%w: %q is not an absolute path; a local file is written file:///path", ErrUnsupportedSource, u.Redacted())
	}
	p := filepath.Clean(u.Path)
	for _, f := range g.files {
		if filepath.Clean(f) == p {
			root, err := os.OpenRoot(filepath.Dir(p))
			if err != nil {
				return nil, "", fmt.Errorf("opening %s: %w", filepath.Dir(p), err)
			}
			return root, filepath.Base(p), nil
		}
	}
	dirs := g.roots
	if g.anyPath {
		dirs = []string{"/"}
	}
	for _, dir := range dirs {
		rel, ok := inside(dir, p)
		if !ok {
			continue
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, "", fmt.Errorf("opening %s: %w", dir, err)
		}
		return root, rel, nil
	}
	return nil, "", fmt.Errorf("%w: %s is outside the allocation directory, which is where local sources are read from; %s",
		ErrSourceRefused, p, g.widen())
}

// widen says how a client operator lets local sources read more.
func (g *localGetter) widen() string {
	return fmt.Sprintf("a client allows other directories with %s, or any path with %s = true", SettingAllowedLocalPaths, SettingDisableIsolation)
}

// readErr explains a failure to open a path inside its root: a path that
// does not exist or may not be read is what it is; anything else is a
// path the root refused to follow, a symlink leading out or an absolute
// one.
func (g *localGetter) readErr(p string, root *os.Root, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("source %s: %w", p, err)
	}
	return fmt.Errorf("%w: %s cannot be read inside %s (%v): local sources follow only relative symlinks that stay inside the directory they are read from; %s",
		ErrSourceRefused, p, root.Name(), errors.Unwrap(err), g.widen())
}

// inside returns p relative to dir if p is dir or under it, trying dir as
// written and with its own symlinks resolved (the alloc dir's path may be
// written either way).
func inside(dir, p string) (string, bool) {
	for _, d := range []string{filepath.Clean(dir), resolved(dir)} {
		if d == "" {
			continue
		}
		if rel, err := filepath.Rel(d, p); err == nil && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}

func resolved(dir string) string {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return r
}

// copyBudget is what a local copy may still write: bytes of limit, and
// files.
type copyBudget struct {
	bytes, limit int64
	files        int
}

func newCopyBudget(limit int64, files int) *copyBudget {
	return &copyBudget{bytes: limit, limit: limit, files: files}
}

// take counts one entry of size bytes.
func (b *copyBudget) take(name string, size int64) error {
	if b.files <= 0 {
		return fmt.Errorf("%w: the source holds more entries than the limit, at %s", ErrTooLarge, name)
	}
	b.files--
	if size > b.bytes {
		if b.bytes == b.limit {
			return tooLarge(name, size, b.limit)
		}
		return fmt.Errorf("%w: the source is more than the limit of %d bytes, at %s", ErrTooLarge, b.limit, name)
	}
	b.bytes -= size
	return nil
}

// copyFile copies src (already open, described by fi) to dst with src's
// permissions less umask; nothing at dst is followed.
func copyFile(ctx context.Context, dst string, src *os.File, fi fs.FileInfo, umask fs.FileMode, b *copyBudget) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("source %s is not a regular file (%s)", src.Name(), fi.Mode().Type())
	}
	// Checked before and while copying: the file may grow meanwhile.
	if err := b.take(src.Name(), fi.Size()); err != nil {
		return err
	}
	b.bytes += fi.Size()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(ctxReader{ctx, src}, b.bytes+1))
	if err == nil && n > b.bytes {
		err = fmt.Errorf("%w: %s grew past the limit of %d bytes while it was copied", ErrTooLarge, src.Name(), b.limit)
	}
	b.bytes -= n
	if err == nil {
		err = out.Chmod(fi.Mode().Perm() &^ umask)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyTree copies directory dir of r into dst, which exists.
func copyTree(ctx context.Context, r *os.Root, dir, dst string, umask fs.FileMode, b *copyBudget) error {
	d, err := r.Open(dir)
	if err != nil {
		return err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, to := path.Join(dir, e.Name()), filepath.Join(dst, e.Name())
		fi, err := r.Lstat(name)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			if err := b.take(name, 0); err != nil {
				return err
			}
			if err := os.Mkdir(to, 0o700); err != nil {
				return err
			}
			if err := copyTree(ctx, r, name, to, umask, b); err != nil {
				return err
			}
			if err := os.Chmod(to, dirMode(fi, umask)); err != nil {
				return err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			if err := b.take(name, 0); err != nil {
				return err
			}
			target, err := r.Readlink(name)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			f, err := r.Open(name)
			if err != nil {
				return err
			}
			fi, err := f.Stat()
			if err == nil {
				err = copyFile(ctx, to, f, fi, umask, b)
			}
			f.Close()
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("source %s is a %s: local sources copy files, directories and symlinks only", name, fi.Mode().Type())
		}
	}
	return nil
}

// dirMode is a copied directory's mode: the source's, less umask, and
// always writable by the agent, which must be able to remove it again.
func dirMode(fi fs.FileInfo, umask fs.FileMode) fs.FileMode {
	return (fi.Mode().Perm() &^ umask) | 0o700
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

package artifact

import (
	"archive/tar"
	"archive/zip"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	getter "github.com/hashicorp/go-getter/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Unpacking archives, for go-getter's Decompressor interface. go-getter
// picks the decompressor by the address's extension (or the `archive`
// option) and calls it with the downloaded file; these write into a
// staging directory that nobody else writes to while they run.
//
// Why not go-getter's own: it turns an archive's symlinks into empty
// files, and its size limits cut a file short instead of failing. Here a
// symlink is kept when it resolves inside the destination and refused
// otherwise, no file is ever written through a symlink that leads out, and
// a bound that is reached is an ErrTooLarge error.

// stream opens the decompressed view of a compressed file.
type stream func(io.Reader) (io.ReadCloser, error)

// file opens the file src through the stream; done closes both.
func (open stream) file(src string) (r io.ReadCloser, done func(), err error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, nil, err
	}
	r, err = open(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", filepath.Base(src), err)
	}
	return r, func() { r.Close(); f.Close() }, nil
}

func plain(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(r), nil }

func gunzip(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }

func bunzip2(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(bzip2.NewReader(r)), nil }

func unxz(r io.Reader) (io.ReadCloser, error) {
	x, err := xz.NewReader(r)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(x), nil
}

func unzstd(r io.Reader) (io.ReadCloser, error) {
	z, err := zstd.NewReader(r)
	if err != nil {
		return nil, err
	}
	return z.IOReadCloser(), nil
}

// limits bound what one archive may unpack to.
type limits struct {
	bytes int64
	files int
}

// decompressors maps go-getter's archive extensions to Drover's unpackers.
func decompressors(l limits) map[string]getter.Decompressor {
	tarOf := func(s stream) getter.Decompressor { return &tarUnpacker{open: s, limits: l} }
	fileOf := func(s stream) getter.Decompressor { return &fileUnpacker{open: s, limits: l} }
	return map[string]getter.Decompressor{
		"tar":     tarOf(plain),
		"tar.gz":  tarOf(gunzip),
		"tgz":     tarOf(gunzip),
		"tar.bz2": tarOf(bunzip2),
		"tbz2":    tarOf(bunzip2),
		"tar.xz":  tarOf(unxz),
		"txz":     tarOf(unxz),
		"tar.zst": tarOf(unzstd),
		"tzst":    tarOf(unzstd),
		"zip":     &zipUnpacker{limits: l},
		"gz":      fileOf(gunzip),
		"bz2":     fileOf(bunzip2),
		"xz":      fileOf(unxz),
		"zst":     fileOf(unzstd),
	}
}

// fileUnpacker decompresses a single compressed file to dst (or to a file
// in dst named after the archive, less its extension, in dir mode).
type fileUnpacker struct {
	open stream
	limits
}

func (u *fileUnpacker) Decompress(dst, src string, dir bool, umask os.FileMode) error {
	r, done, err := u.open.file(src)
	if err != nil {
		return err
	}
	defer done()
	if dir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		name := filepath.Base(src)
		dst = filepath.Join(dst, strings.TrimSuffix(name, filepath.Ext(name)))
	} else if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return writeFile(dst, r, 0o644&^umask, newBudget(u.bytes))
}

// tarUnpacker unpacks a tar archive read through open.
type tarUnpacker struct {
	open stream
	limits
}

func (u *tarUnpacker) Decompress(dst, src string, dir bool, umask os.FileMode) error {
	r, done, err := u.open.file(src)
	if err != nil {
		return err
	}
	defer done()
	x, err := newExtractor(dst, dir, u.limits, umask)
	if err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return x.finish(src)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(src), err)
		}
		var kind entryKind
		switch hdr.Typeflag {
		case tar.TypeDir:
			kind = entryDir
		case tar.TypeReg: // the reader reports old TypeRegA entries as TypeReg
			kind = entryFile
		case tar.TypeSymlink:
			kind = entrySymlink
		case tar.TypeLink:
			kind = entryHardlink
		default:
			continue // devices, FIFOs and global headers mean nothing in a task dir
		}
		if err := x.add(hdr.Name, kind, hdr.FileInfo().Mode(), hdr.Linkname, tr); err != nil {
			return err
		}
	}
}

// zipUnpacker unpacks a zip archive.
type zipUnpacker struct{ limits }

func (u *zipUnpacker) Decompress(dst, src string, dir bool, umask os.FileMode) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(src), err)
	}
	defer zr.Close()
	x, err := newExtractor(dst, dir, u.limits, umask)
	if err != nil {
		return err
	}
	for _, zf := range zr.File {
		if err := u.entry(x, zf); err != nil {
			return err
		}
	}
	return x.finish(src)
}

func (u *zipUnpacker) entry(x *extractor, zf *zip.File) error {
	mode := zf.Mode()
	kind := entryFile
	switch {
	case mode.IsDir():
		kind = entryDir
	case mode&fs.ModeSymlink != 0:
		kind = entrySymlink
	case !mode.IsRegular():
		return nil
	}
	var target string
	var body io.Reader
	if kind != entryDir {
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("read %s: %w", zf.Name, err)
		}
		defer rc.Close()
		body = rc
		if kind == entrySymlink {
			// A zip symlink's content is its target.
			b, err := io.ReadAll(io.LimitReader(rc, 4096))
			if err != nil {
				return fmt.Errorf("read %s: %w", zf.Name, err)
			}
			target = string(b)
		}
	}
	return x.add(zf.Name, kind, mode, target, body)
}

type entryKind int

const (
	entryFile entryKind = iota
	entryDir
	entrySymlink
	entryHardlink
)

// extractor writes an archive's entries under root, refusing any that
// would land outside it.
type extractor struct {
	root  string
	dir   bool // false: the archive must hold one file, written to root
	umask os.FileMode
	limits
	budget *budget
	count  int
	wrote  bool
	dirs   map[string]os.FileMode
}

func newExtractor(dst string, dir bool, l limits, umask os.FileMode) (*extractor, error) {
	mk := dst
	if !dir {
		mk = filepath.Dir(dst)
	}
	if err := os.MkdirAll(mk, 0o755); err != nil {
		return nil, err
	}
	root := dst
	if dir {
		// Compare real paths: the staging dir may sit under a symlink.
		r, err := filepath.EvalSymlinks(dst)
		if err != nil {
			return nil, err
		}
		root = r
	}
	return &extractor{root: root, dir: dir, umask: umask, limits: l, budget: newBudget(l.bytes), dirs: map[string]os.FileMode{}}, nil
}

func (x *extractor) add(name string, kind entryKind, mode fs.FileMode, link string, body io.Reader) error {
	x.count++
	if x.files > 0 && x.count > x.files {
		return fmt.Errorf("%w: the archive has more than %d entries", ErrTooLarge, x.files)
	}
	if !x.dir {
		return x.single(name, kind, mode, body)
	}
	rel, err := entryPath(name)
	if err != nil || rel == "." {
		return err
	}
	path := filepath.Join(x.root, rel)
	if err := x.mkdirs(filepath.Dir(path)); err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	switch kind {
	case entryDir:
		if err := x.mkdirs(path); err != nil {
			return fmt.Errorf("entry %q: %w", name, err)
		}
		x.dirs[path] = mode.Perm() | 0o700
		return nil
	case entrySymlink:
		dest := link
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		if !x.inside(filepath.Clean(dest)) {
			return fmt.Errorf("%w: symlink %q points to %q", ErrUnsafeArchive, name, link)
		}
		if err := removeNonDir(path); err != nil {
			return err
		}
		return os.Symlink(link, path)
	case entryHardlink:
		lrel, err := entryPath(link)
		if err != nil {
			return fmt.Errorf("%w: hard link %q to %q", ErrUnsafeArchive, name, link)
		}
		from := filepath.Join(x.root, lrel)
		if err := x.checkParent(from); err != nil {
			return fmt.Errorf("entry %q: %w", name, err)
		}
		if fi, err := os.Lstat(from); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: hard link %q to %q, which is not a file unpacked before it", ErrUnsafeArchive, name, link)
		}
		if err := removeNonDir(path); err != nil {
			return err
		}
		return os.Link(from, path)
	}
	if err := removeNonDir(path); err != nil {
		return err
	}
	return writeFile(path, body, mode.Perm()&^x.umask, x.budget)
}

// single writes the one file of an archive fetched in file mode.
func (x *extractor) single(name string, kind entryKind, mode fs.FileMode, body io.Reader) error {
	switch kind {
	case entryDir:
		return nil
	case entryFile:
	default:
		return fmt.Errorf("%w: %q is a link, and mode \"file\" takes one regular file", ErrUnsafeArchive, name)
	}
	if x.wrote {
		return fmt.Errorf("the archive holds more than one file, and mode \"file\" takes one (use mode \"dir\" or \"any\")")
	}
	x.wrote = true
	if err := removeNonDir(x.root); err != nil {
		return err
	}
	return writeFile(x.root, body, mode.Perm()&^x.umask, x.budget)
}

// finish applies directory modes once their contents are written, and
// checks every symlink again now that all entries exist: a link that
// looked harmless may lead out through links created after it.
func (x *extractor) finish(src string) error {
	if !x.dir {
		if !x.wrote {
			return fmt.Errorf("archive %s holds no file", filepath.Base(src))
		}
		return nil
	}
	for d, m := range x.dirs {
		if err := os.Chmod(d, m&^x.umask); err != nil {
			return err
		}
	}
	return checkLinks(x.root)
}

// entryPath turns an archive entry name into a path relative to the
// destination, as tar does with leading slashes, and refuses one that
// climbs out with "..".
func entryPath(name string) (string, error) {
	clean := filepath.Clean(strings.TrimLeft(filepath.FromSlash(name), "/"))
	if clean == "" {
		clean = "."
	}
	if !filepath.IsLocal(clean) && clean != "." {
		return "", fmt.Errorf("%w: entry %q", ErrUnsafeArchive, name)
	}
	return clean, nil
}

// inside reports whether p, a clean absolute path, is root or under it.
func (x *extractor) inside(p string) bool {
	return within(x.root, p)
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// mkdirs creates dir (under root) and its parents, never following a
// symlink that resolves outside root.
func (x *extractor) mkdirs(dir string) error {
	if err := x.checkParent(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// checkParent refuses a path whose existing part resolves outside root
// through symlinks.
func (x *extractor) checkParent(p string) error {
	for q := p; within(x.root, q); q = filepath.Dir(q) {
		real, err := filepath.EvalSymlinks(q)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !within(x.root, real) {
			return fmt.Errorf("%w: %s leads to %s", ErrUnsafeArchive, strings.TrimPrefix(q, x.root+"/"), real)
		}
		return nil
	}
	return nil
}

// checkLinks walks root and refuses any symlink that resolves outside it
// (or, when dangling, points outside it).
func checkLinks(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			real = target
			if !filepath.IsAbs(real) {
				real = filepath.Join(filepath.Dir(p), real)
			}
			real = filepath.Clean(real)
		} else if err != nil {
			return fmt.Errorf("%w: symlink %q: %v", ErrUnsafeArchive, strings.TrimPrefix(p, root+"/"), err)
		}
		if !within(root, real) {
			return fmt.Errorf("%w: symlink %q points to %q", ErrUnsafeArchive, strings.TrimPrefix(p, root+"/"), target)
		}
		return nil
	})
}

// removeNonDir makes room for an entry that replaces an earlier one of
// the same name; a symlink is removed, not followed.
func removeNonDir(p string) error {
	fi, err := os.Lstat(p)
	if err != nil || fi.IsDir() {
		return nil
	}
	return os.Remove(p)
}

// budget is what is left of an unpacking bound; limit 0 means unbounded.
type budget struct{ left, limit int64 }

func newBudget(limit int64) *budget { return &budget{left: limit, limit: limit} }

// writeFile writes r to a new file at p with perm, counting the bytes
// against b. The file must not exist: O_EXCL also refuses to follow a
// symlink someone left at p.
func writeFile(p string, r io.Reader, perm fs.FileMode, b *budget) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if r == nil {
		r = strings.NewReader("")
	}
	if b.limit > 0 {
		var n int64
		n, err = io.Copy(f, io.LimitReader(r, b.left+1))
		b.left -= n
		if err == nil && b.left < 0 {
			err = fmt.Errorf("%w: unpacked, the archive passes the limit of %d bytes", ErrTooLarge, b.limit)
		}
	} else {
		_, err = io.Copy(f, r)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(p, perm) // the process umask must not decide
	}
	return err
}

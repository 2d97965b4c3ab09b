package allocdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Writing into the alloc dir for the client itself (an artifact's or a
// template's destination). A job names such a destination; the client
// must never be led to write outside the alloc dir, neither by ".." in the
// name nor by a symlink that already lies on the way. Unlike `alloc fs`
// reads, a task's secrets directory is a fine destination: the task asked
// for its own file there.

// HostPath returns where p, a path relative to the alloc dir, lies on the
// host. A path that leaves the alloc dir through "..", or through a
// symlink in the part of it that already exists, is refused with
// ErrPathEscapes. The rest of the path need not exist yet.
//
// The check is made when HostPath is called, and a running task of the
// alloc (a sidecar, a sibling) can swap a directory for a symlink right
// after: it is an early refusal only. The write itself must go through
// OpenDir and the other *At functions, which follow no symlink.
func (a *AllocDir) HostPath(p string) (string, error) {
	rel := filepath.Clean(strings.TrimLeft(p, "/"))
	if rel == "" {
		rel = "."
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%q: %w", p, ErrPathEscapes)
	}
	root, err := filepath.EvalSymlinks(a.Root)
	if err != nil {
		return "", fmt.Errorf("alloc dir: %w", err)
	}
	full := filepath.Join(root, rel)
	// EvalSymlinks resolves every link on the way, so checking the
	// deepest part that exists covers all the parts above it.
	existing := full
	for {
		real, err := filepath.EvalSymlinks(existing)
		if err == nil {
			if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
				return "", fmt.Errorf("%q: %w (%s leads to %s)", p, ErrPathEscapes, existing, real)
			}
			return full, nil
		}
		// Not there yet, or under a file: look at the part above.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("resolve %q: %w", p, err)
		}
		// A dangling symlink is "not exist" too; refuse it if it points
		// outside, since writing through it would create its target.
		if target, lerr := os.Readlink(existing); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(existing), target)
			}
			if t := filepath.Clean(target); t != root && !strings.HasPrefix(t, root+string(filepath.Separator)) {
				return "", fmt.Errorf("%q: %w (%s points to %s)", p, ErrPathEscapes, existing, target)
			}
		}
		parent := filepath.Dir(existing)
		if parent == existing || len(parent) < len(root) {
			return "", fmt.Errorf("alloc dir %s: %w", root, fs.ErrNotExist)
		}
		existing = parent
	}
}

package logmon

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Rotator writes a stream into numbered files of at most maxBytes each,
// keeping the newest maxFiles. It is not safe for concurrent use; one
// copier goroutine owns it.
type Rotator struct {
	dir, base string
	maxBytes  int64
	maxFiles  int

	idx  int
	f    *os.File
	size int64
}

// NewRotator opens (or continues) the files dir/base.N.
func NewRotator(dir, base string, maxBytes int64, maxFiles int) (*Rotator, error) {
	if maxBytes <= 0 {
		maxBytes = 10 << 20
	}
	if maxFiles <= 0 {
		maxFiles = 1
	}
	r := &Rotator{dir: dir, base: base, maxBytes: maxBytes, maxFiles: maxFiles}
	if idx := Indexes(dir, base); len(idx) > 0 {
		r.idx = idx[len(idx)-1]
	}
	r.prune()
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Rotator) path(i int) string { return filepath.Join(r.dir, r.base+"."+strconv.Itoa(i)) }

func (r *Rotator) open() error {
	f, err := os.OpenFile(r.path(r.idx), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// Write splits p across files so that none exceeds maxBytes.
func (r *Rotator) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		room := r.maxBytes - r.size
		if room <= 0 {
			if err := r.rotate(); err != nil {
				return written, err
			}
			continue
		}
		chunk := p
		if int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		n, err := r.f.Write(chunk)
		written += n
		r.size += int64(n)
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// rotate starts the next file. The oldest files go first, so that at no
// moment are there more than maxFiles files of at most maxBytes each: a
// task writing as fast as it can (`yes`) holds the disk to that bound.
func (r *Rotator) rotate() error {
	r.f.Close()
	r.idx++
	r.prune()
	return r.open()
}

// prune removes the files that leave no room for maxFiles ending with the
// current one (r.idx), including files left by an earlier client with a
// larger max_files.
func (r *Rotator) prune() {
	for _, i := range Indexes(r.dir, r.base) {
		if i <= r.idx-r.maxFiles {
			_ = os.Remove(r.path(i))
		}
	}
}

// Close closes the current file.
func (r *Rotator) Close() error { return r.f.Close() }

// Indexes returns the N of every dir/base.N file, ascending.
func Indexes(dir, base string) []int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base+".") {
			continue
		}
		n, err := strconv.Atoi(name[len(base)+1:])
		if err != nil || n < 0 {
			continue
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

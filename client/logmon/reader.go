package logmon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/drover-sched/drover/helper/clock"
)

// Origins of a read offset.
const (
	OriginStart = "start"
	OriginEnd   = "end"
)

// ReaderOptions say where to start reading and whether to follow.
type ReaderOptions struct {
	Origin string
	Offset int64
	Follow bool
	// Done reports that no more output will come (the task is dead); a
	// following reader returns io.EOF once it has read everything then.
	Done  func() bool
	Clock clock.Clock
	// Poll is how often a following reader looks for new output.
	Poll time.Duration
}

// Reader reads a task's rotated log files as one stream.
type Reader struct {
	dir, base string
	opts      ReaderOptions

	mu     sync.Mutex
	idx    int // file being read
	f      *os.File
	closed chan struct{}
	once   sync.Once
}

// NewReader returns a reader of dir/<task>.<stream>.N from the position the
// options name. Offsets past either end are clamped.
func NewReader(dir, task, stream string, opts ReaderOptions) (*Reader, error) {
	if stream != Stdout && stream != Stderr {
		return nil, fmt.Errorf("log type %q must be stdout or stderr", stream)
	}
	if opts.Origin == "" {
		opts.Origin = OriginStart
	}
	if opts.Origin != OriginStart && opts.Origin != OriginEnd {
		return nil, fmt.Errorf("origin %q must be start or end", opts.Origin)
	}
	if opts.Offset < 0 {
		return nil, fmt.Errorf("offset %d must be >= 0", opts.Offset)
	}
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.Done == nil {
		opts.Done = func() bool { return true }
	}
	base := task + "." + stream
	r := &Reader{dir: dir, base: base, opts: opts, closed: make(chan struct{})}
	idxs := Indexes(dir, base)
	if len(idxs) == 0 {
		if !opts.Follow {
			return nil, fmt.Errorf("no %s logs for task %q: %w", stream, task, os.ErrNotExist)
		}
		r.idx = 0
		return r, nil
	}
	sizes := make([]int64, len(idxs))
	var total int64
	for i, n := range idxs {
		if fi, err := os.Stat(r.path(n)); err == nil {
			sizes[i] = fi.Size()
		}
		total += sizes[i]
	}
	skip := opts.Offset
	if opts.Origin == OriginEnd {
		skip = max(total-opts.Offset, 0)
	}
	skip = min(skip, total)
	for i, n := range idxs {
		if skip <= sizes[i] || i == len(idxs)-1 {
			r.idx = n
			f, err := os.Open(r.path(n))
			if err != nil {
				return nil, err
			}
			if _, err := f.Seek(min(skip, sizes[i]), io.SeekStart); err != nil {
				f.Close()
				return nil, err
			}
			r.f = f
			break
		}
		skip -= sizes[i]
	}
	return r, nil
}

func (r *Reader) path(n int) string { return filepath.Join(r.dir, r.base+"."+strconv.Itoa(n)) }

// Read reads the next bytes, moving to newer files as they appear. A
// following reader waits for more output until Done or Close.
func (r *Reader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		select {
		case <-r.closed:
			return 0, io.EOF
		default:
		}
		if r.f == nil {
			f, err := os.Open(r.path(r.idx))
			if err == nil {
				r.f = f
			} else if !errors.Is(err, os.ErrNotExist) {
				return 0, err
			}
		}
		if r.f != nil {
			n, err := r.f.Read(p)
			if n > 0 {
				return n, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
		}
		// At the end of the current file: go on to the next one if the
		// rotator has started it (or skipped past it, after deletions).
		if next, ok := r.nextIndex(); ok {
			if r.f != nil {
				r.f.Close()
			}
			r.f, r.idx = nil, next
			continue
		}
		// Read Done before the final check: output written before the task
		// died is then seen by one more read.
		done := r.opts.Done()
		if !r.opts.Follow || done {
			if r.f != nil {
				if n, _ := r.f.Read(p); n > 0 {
					return n, nil
				}
			}
			return 0, io.EOF
		}
		r.mu.Unlock()
		select {
		case <-r.closed:
		case <-r.opts.Clock.After(r.opts.Poll):
		}
		r.mu.Lock()
	}
}

func (r *Reader) nextIndex() (int, bool) {
	for _, n := range Indexes(r.dir, r.base) {
		if n > r.idx {
			return n, true
		}
	}
	return 0, false
}

// Close ends the reader; a Read waiting for output returns io.EOF.
func (r *Reader) Close() error {
	r.once.Do(func() { close(r.closed) })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	return nil
}

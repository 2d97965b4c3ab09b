package logmon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stream names.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// FIFOPath is where a task's stream FIFO lives.
func FIFOPath(logDir, task, stream string) string {
	return filepath.Join(logDir, "."+task+"."+stream+".fifo")
}

// TaskLogger copies one task's two streams into rotated files.
type TaskLogger struct {
	streams [2]*stream
	wg      sync.WaitGroup
}

type stream struct {
	fifo string
	r    *os.File
	rot  *Rotator

	mu       sync.Mutex
	running  bool
	again    bool // Start was called while the copier was draining
	shutdown bool
}

// Open creates the FIFOs (if missing) and opens their read ends. Call it
// before the driver opens the write ends.
func Open(logDir, task string, maxBytes int64, maxFiles int) (*TaskLogger, error) {
	l := &TaskLogger{}
	for i, name := range []string{Stdout, Stderr} {
		s, err := openStream(logDir, task, name, maxBytes, maxFiles)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.streams[i] = s
	}
	return l, nil
}

func openStream(logDir, task, name string, maxBytes int64, maxFiles int) (*stream, error) {
	fifo := FIFOPath(logDir, task, name)
	if err := unix.Mkfifo(fifo, 0o600); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("create %s fifo: %w", name, err)
	}
	// Non-blocking so the open does not wait for a writer; the file then
	// uses Go's poller, so a Read parks instead of holding a thread.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s fifo: %w", name, err)
	}
	rot, err := NewRotator(logDir, task+"."+name, maxBytes, maxFiles)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &stream{fifo: fifo, r: r, rot: rot}, nil
}

// StdoutPath is the FIFO the driver writes stdout into.
func (l *TaskLogger) StdoutPath() string { return l.streams[0].fifo }

// StderrPath is the FIFO the driver writes stderr into.
func (l *TaskLogger) StderrPath() string { return l.streams[1].fifo }

// Start copies what the current task attempt writes. Call it after the
// driver has started (or re-attached to) the task, so a writer exists: a
// FIFO without writers reads as end of file. The copier ends at end of
// file, that is when every process of the attempt has closed its output.
func (l *TaskLogger) Start() {
	for _, s := range l.streams {
		if s == nil {
			continue
		}
		s.mu.Lock()
		switch {
		case s.shutdown:
		case s.running:
			s.again = true
		default:
			s.running = true
			l.wg.Add(1)
			go l.copy(s)
		}
		s.mu.Unlock()
	}
}

func (l *TaskLogger) copy(s *stream) {
	defer l.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.r.Read(buf)
		if n > 0 {
			_, _ = s.rot.Write(buf[:n])
		}
		if err == nil {
			continue
		}
		s.mu.Lock()
		if err == io.EOF && s.again && !s.shutdown {
			s.again = false
			s.mu.Unlock()
			continue
		}
		s.running = false
		s.mu.Unlock()
		return
	}
}

// Wait blocks until the copiers have drained what the attempt wrote.
func (l *TaskLogger) Wait() { l.wg.Wait() }

// Close stops the copiers (closing the read ends makes their reads fail)
// and closes the files. A running task keeps its FIFO; a restarted client
// opens it again.
func (l *TaskLogger) Close() {
	for _, s := range l.streams {
		if s == nil {
			continue
		}
		s.mu.Lock()
		s.shutdown = true
		s.mu.Unlock()
		s.r.Close()
	}
	l.wg.Wait()
	for _, s := range l.streams {
		if s != nil {
			s.rot.Close()
		}
	}
}

package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
)

// logWriters are the write ends of a task's log FIFOs. They are opened
// before StartTask or RecoverTask returns, so that the task runner's
// reader, open since before either call, never sees a FIFO without a
// writer, which reads as the end of the output. The copy holds no reader
// of its own: a write the FIFO refuses (EPIPE) means the reader is gone.
type logWriters struct{ stdout, stderr io.WriteCloser }

func openLogWriters(cfg *drivers.TaskConfig) (*logWriters, error) {
	stdout, err := openLogWriter(cfg.StdoutPath)
	if err != nil {
		return nil, fmt.Errorf("open stdout log FIFO: %w", err)
	}
	stderr, err := openLogWriter(cfg.StderrPath)
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("open stderr log FIFO: %w", err)
	}
	return &logWriters{stdout: stdout, stderr: stderr}, nil
}

func (w *logWriters) Close() {
	w.stdout.Close()
	w.stderr.Close()
}

// copyLogs follows the container's output and writes stdout and stderr to
// the task runner's FIFOs, which turn them into rotated log files as for
// every other driver. It closes the writers when the output ends.
//
// The output is read with the daemon's timestamps, and the copy keeps a
// cursor (log_cursor.go) after each entry. When the follow stream ends
// while the container still runs (the daemon stopped or restarted; with
// live-restore the container lives on), the copy follows again from the
// cursor once the daemon answers. When it ends because the container
// exited, the output is read once more without follow from the cursor: the
// daemon's follow stream can end without the last line if that line has
// no newline (`printf done`), and a plain read returns it.
//
// start is where the copy begins: the zero cursor for a new container, the
// previous client's cursor for a re-attached one.
func (d *Driver) copyLogs(ctx context.Context, t *task, start logCursor, w *logWriters) {
	defer close(t.logsDone)
	defer w.Close()
	if t.tty {
		d.copyTTYLogs(ctx, t, start.At, w)
		return
	}
	cf, err := openCursorFile(t.cfg.TaskDir, t.containerID)
	if err != nil {
		d.logger.Warn("log cursor not kept; a client restart may copy output twice", "container", shortID(t.containerID), "error", err)
	}
	defer cf.Close()
	c := &entryCopy{d: d, t: t, w: w, file: cf, cur: start}
	retry := logRetryFirst
	for {
		copied, err := c.run(ctx, true)
		if ctx.Err() != nil {
			return
		}
		var werr *logWriteError
		if errors.As(err, &werr) {
			d.logger.Debug("container log copy ended", "container", shortID(t.containerID), "error", err)
			return
		}
		if d.stopped(t) {
			if _, err := c.run(ctx, false); err != nil && ctx.Err() == nil {
				d.logger.Debug("reading the container's last output failed", "container", shortID(t.containerID), "error", err)
			}
			return
		}
		d.noticeHealth()
		if copied > 0 {
			retry = logRetryFirst
		}
		d.logger.Debug("container log stream ended while it runs; following again", "container", shortID(t.containerID), "error", err, "in", retry)
		select {
		case <-ctx.Done():
			return
		case <-d.clock.After(retry):
		}
		retry = min(2*retry, logRetryMax)
	}
}

// The waits before the copy follows a running container's output again
// after the daemon dropped the stream: doubling from logRetryFirst.
const (
	logRetryFirst = 250 * time.Millisecond
	logRetryMax   = 5 * time.Second
)

// stopped reports whether the container is no longer running (or gone),
// so that a log stream that ended has all there is. A daemon that does
// not answer leaves the question open: false.
func (d *Driver) stopped(t *task) bool {
	ctx, cancel := d.call()
	defer cancel()
	info, err := d.docker.ContainerInspect(ctx, t.containerID)
	if err != nil {
		return cerrdefs.IsNotFound(err)
	}
	return info.State == nil || !info.State.Running
}

// entryCopy copies timestamped entries to the FIFOs and moves the cursor.
type entryCopy struct {
	d    *Driver
	t    *task
	w    *logWriters
	file *cursorFile
	cur  logCursor
	// fileErr is logged once.
	fileErr bool
}

// logWriteError is a write to a log FIFO that failed: the task runner's
// reader is gone, and following again would not help.
type logWriteError struct{ err error }

func (e *logWriteError) Error() string { return "writing to the log FIFO: " + e.err.Error() }
func (e *logWriteError) Unwrap() error { return e.err }

// run copies the output from the cursor on (following it when follow)
// and returns how many entries it copied.
func (c *entryCopy) run(ctx context.Context, follow bool) (int, error) {
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: follow, Timestamps: true}
	start := c.cur
	if !start.At.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", start.At.Unix(), start.At.Nanosecond())
	}
	rc, err := c.d.docker.ContainerLogs(ctx, c.t.containerID, opts)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	fr := &frameReader{r: rc}
	copied, seen := 0, 0
	for {
		e, err := fr.next()
		if errors.Is(err, io.EOF) {
			return copied, nil
		}
		if err != nil {
			return copied, err
		}
		if start.skips(e.at, &seen) {
			continue
		}
		var dst io.Writer
		switch e.stream {
		case frameStdout:
			dst = c.w.stdout
		case frameStderr:
			dst = c.w.stderr
		default:
			continue
		}
		if _, err := dst.Write(e.data); err != nil {
			return copied, &logWriteError{err: err}
		}
		copied++
		c.cur.advance(e.at)
		if err := c.file.write(c.cur); err != nil && !c.fileErr {
			c.fileErr = true
			c.d.logger.Warn("log cursor not kept; a client restart may copy output twice", "container", shortID(c.t.containerID), "error", err)
		}
	}
}

// copyTTYLogs copies a TTY container's output, which the daemon sends raw
// (the streams merged, no frames to carry timestamps), from since on.
// Once the follow stream ends, the output is read again without follow
// and what goes beyond the bytes already copied is copied too (the last
// line without a newline, as above).
func (d *Driver) copyTTYLogs(ctx context.Context, t *task, since time.Time, w *logWriters) {
	stdout := &skipWriter{w: w.stdout}
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}
	if !since.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	if err := d.copyLogStream(ctx, t, opts, stdout); err != nil {
		if ctx.Err() == nil {
			d.logger.Debug("container log copy ended", "container", t.containerID, "error", err)
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	stdout.skip, stdout.n = stdout.n, 0
	opts.Follow = false
	if err := d.copyLogStream(ctx, t, opts, stdout); err != nil && ctx.Err() == nil {
		d.logger.Debug("reading the container's last output failed", "container", t.containerID, "error", err)
	}
}

// copyLogStream copies one raw (TTY) logs request's output.
func (d *Driver) copyLogStream(ctx context.Context, t *task, opts container.LogsOptions, stdout io.Writer) error {
	rc, err := d.docker.ContainerLogs(ctx, t.containerID, opts)
	if err != nil {
		if ctx.Err() == nil {
			d.logger.Warn("cannot read container logs (is the logging driver readable?)", "container", t.containerID, "error", err)
		}
		return err
	}
	defer rc.Close()
	_, err = io.Copy(stdout, rc)
	return err
}

// skipWriter drops the first skip bytes written to it and passes the rest
// on, counting in n all it was given.
type skipWriter struct {
	w       io.Writer
	skip, n int64
}

func (s *skipWriter) Write(p []byte) (int, error) {
	total := len(p)
	if drop := min(s.skip-s.n, int64(len(p))); drop > 0 {
		p = p[drop:]
	}
	s.n += int64(total)
	if len(p) == 0 {
		return total, nil
	}
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return total, nil
}

// openLogWriter opens the write end of a log FIFO without blocking when no
// reader is there yet: a read end opened non-blocking first lets the write
// open return at once, and is closed again, so the writer does not keep
// the FIFO alive by itself. An empty path discards the output.
func openLogWriter(path string) (io.WriteCloser, error) {
	if path == "" {
		return nopCloser{io.Discard}, nil
	}
	rfd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(rfd)
	return os.OpenFile(path, os.O_WRONLY, 0)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

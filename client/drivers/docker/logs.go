package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
)

// logWriters are the write ends of a task's log FIFOs. They are opened
// before StartTask or RecoverTask returns: the task runner starts reading
// then, and a FIFO without a writer reads as the end of the output.
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
// every other driver. The daemon keeps the output, so a copier that starts
// late (or again after a client restart, from since) loses nothing that is
// still there. It closes the writers when the output ends.
//
// The daemon's follow stream can end, when the container exits, without
// the output's last line if that line has no newline (`printf done`): the
// daemon has it, and a plain read returns it. So once the stream ends,
// the output is read again without follow and what goes beyond the bytes
// already copied of each stream is copied too. That read is of the whole
// output the daemon keeps, once per container exit.
func (d *Driver) copyLogs(ctx context.Context, t *task, since time.Time, w *logWriters) {
	defer close(t.logsDone)
	defer w.Close()
	stdout, stderr := &skipWriter{w: w.stdout}, &skipWriter{w: w.stderr}
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}
	if !since.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	if err := d.copyLogStream(ctx, t, opts, stdout, stderr); err != nil {
		if ctx.Err() == nil {
			d.logger.Debug("container log copy ended", "container", t.containerID, "error", err)
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	// Skip what was copied; write what the stream left out.
	stdout.skip, stdout.n = stdout.n, 0
	stderr.skip, stderr.n = stderr.n, 0
	opts.Follow = false
	if err := d.copyLogStream(ctx, t, opts, stdout, stderr); err != nil && ctx.Err() == nil {
		d.logger.Debug("reading the container's last output failed", "container", t.containerID, "error", err)
	}
}

// copyLogStream copies one logs request's output.
func (d *Driver) copyLogStream(ctx context.Context, t *task, opts container.LogsOptions, stdout, stderr io.Writer) error {
	rc, err := d.docker.ContainerLogs(ctx, t.containerID, opts)
	if err != nil {
		if ctx.Err() == nil {
			d.logger.Warn("cannot read container logs (is the logging driver readable?)", "container", t.containerID, "error", err)
		}
		return err
	}
	defer rc.Close()
	if t.tty {
		// A TTY merges the streams and the daemon sends them raw.
		_, err = io.Copy(stdout, rc)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, rc)
	}
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

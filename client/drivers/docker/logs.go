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
)

// copyLogs follows the container's output and writes stdout and stderr to
// the task runner's FIFOs, which turn them into rotated log files as for
// every other driver. The daemon keeps the output, so a copier that starts
// late (or again after a client restart, from since) loses nothing that is
// still there.
func (d *Driver) copyLogs(ctx context.Context, t *task, since time.Time) {
	defer close(t.logsDone)
	stdout, err := openLogWriter(t.cfg.StdoutPath)
	if err != nil {
		d.logger.Warn("cannot open stdout log FIFO", "task", t.cfg.ID, "error", err)
		return
	}
	defer stdout.Close()
	stderr, err := openLogWriter(t.cfg.StderrPath)
	if err != nil {
		d.logger.Warn("cannot open stderr log FIFO", "task", t.cfg.ID, "error", err)
		return
	}
	defer stderr.Close()
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}
	if !since.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	rc, err := d.docker.ContainerLogs(ctx, t.containerID, opts)
	if err != nil {
		if ctx.Err() == nil {
			d.logger.Warn("cannot read container logs (is the logging driver readable?)", "container", t.containerID, "error", err)
		}
		return
	}
	defer rc.Close()
	if t.tty {
		// A TTY merges the streams and the daemon sends them raw.
		_, err = io.Copy(stdout, rc)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, rc)
	}
	if err != nil && ctx.Err() == nil {
		d.logger.Debug("container log copy ended", "container", t.containerID, "error", err)
	}
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

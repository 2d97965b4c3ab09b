package executor

import (
	"os"

	"golang.org/x/sys/unix"
)

// openLogFIFO opens the write end of a log FIFO for a task's stdout or
// stderr, plus a read end for the task to hold (see doc.go). An empty path
// means /dev/null and no holder.
//
// The read end is opened first and non-blocking, which succeeds at once and
// makes the write end's open succeed at once too, whether or not the task
// runner is reading yet. Both are raw blocking-mode descriptors wrapped in
// os.File without Go's poller, because the child inherits their file status
// flags: a non-blocking stdout would make the task's writes fail with EAGAIN.
func openLogFIFO(path string) (w, hold *os.File, err error) {
	if path == "" {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		return f, nil, err
	}
	rfd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	wfd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(rfd)
		return nil, nil, err
	}
	return os.NewFile(uintptr(wfd), path), os.NewFile(uintptr(rfd), path), nil
}

package docker

import (
	"os"
	"syscall"
)

func mkfifoAt(path string) error { return syscall.Mkfifo(path, 0o666) }

// writeFIFO writes s to a FIFO the task reads.
func writeFIFO(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(s)
	return err
}

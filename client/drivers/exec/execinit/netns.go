package execinit

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// joinNetNS moves the calling thread into the network namespace at path
// (nothing for an empty path). Only this thread moves, so it must be the
// one that forks the task: run locks itself to it.
func joinNetNS(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open the alloc's network namespace: %w", err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("join the alloc's network namespace %s: %w", path, err)
	}
	return nil
}

package network

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// createNetNS makes a new network namespace and pins it with a bind
// mount at path, as `ip netns add` does, so it outlives every process in
// it and can be joined by path. The unshare happens on a thread of its
// own that is never given back to the Go runtime: a thread whose network
// namespace changed must not run anyone else's goroutines.
func createNetNS(path string) error {
	errc := make(chan error, 1)
	go func() {
		// No UnlockOSThread: the runtime ends this thread with the
		// goroutine, namespace and all.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare a network namespace: %w", err)
			return
		}
		errc <- pinNetNS(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()), path)
	}()
	return <-errc
}

// pinNetNS pins the namespace at src (a process's /proc/<pid>/ns/net)
// at path, so it can be joined by path and outlives a restart of the
// client.
func pinNetNS(src, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("network namespace dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("network namespace file: %w", err)
	}
	f.Close()
	if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("pin the network namespace %s at %s: %w", src, path, err)
	}
	return nil
}

// removeNetNS unpins the namespace at path and removes the file. A
// namespace that is not there (already removed, or never made) is not an
// error: teardown is run again after a crash.
func removeNetNS(path string) error {
	err := unix.Unmount(path, unix.MNT_DETACH)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount network namespace %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", path, err)
	}
	return nil
}

// isNetNS reports whether path is a pinned network namespace.
func isNetNS(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Type == unix.NSFS_MAGIC
}

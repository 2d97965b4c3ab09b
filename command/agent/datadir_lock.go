package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dataDirLockFile is the file in the data dir an agent holds an exclusive
// lock on for as long as it runs. It holds the agent's PID, so a refused
// second agent can say which process has the dir.
const dataDirLockFile = "agent.lock"

// dataDirLock is a held lock on a data dir.
type dataDirLock struct {
	f *os.File
}

// lockDataDir takes the exclusive lock on dir, or refuses at once: two
// agents on one data dir would fight over raft's and the client's
// databases (the second used to hang silently on bolt's own lock). The
// lock is flock(2), released by the kernel when the process exits, so a
// crashed agent never leaves a stale lock behind.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, dataDirLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("agent: data_dir %s: opening its lock file: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			owner := "another agent"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
					owner = fmt.Sprintf("another agent (PID %d)", pid)
				}
			}
			return nil, fmt.Errorf("agent: data_dir %s is in use by %s; stop it first, or give this agent its own data_dir", dir, owner)
		}
		return nil, fmt.Errorf("agent: data_dir %s: locking %s: %w", dir, path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dataDirLock{f: f}, nil
}

// release unlocks the dir. The lock file stays: removing it would let a
// third agent lock a new file while a second still waits on the old one.
func (l *dataDirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}

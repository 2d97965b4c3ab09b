package execinit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// resolve finds the command inside the (already pivoted) root.
func resolve(s *Spec) (string, error) {
	cmd := s.Command
	if strings.ContainsRune(cmd, '/') {
		p := cmd
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Cwd, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("command %q inside the task's chroot: %w", cmd, err)
		}
		return p, nil
	}
	path := ""
	for _, kv := range s.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, cmd)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found on PATH %q inside the task's chroot (the chroot has only what the client's chroot_env maps)", cmd, path)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// start drops what the task must not hold and starts it as pid 2.
func start(s *Spec) (*supervisor, error) {
	path, err := resolve(s)
	if err != nil {
		return nil, err
	}
	cwd := s.Cwd
	if cwd == "" {
		cwd = "/"
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("working directory %q inside the task's chroot: %w", cwd, err)
	}
	// Every catchable signal is caught before the task exists, so none
	// sent while it starts is lost (see supervise.go).
	sup := newSupervisor()
	if err := dropCaps(s); err != nil {
		return nil, err
	}
	if s.NoNewPrivs {
		// Inherited by the task and kept across its execs: setuid
		// binaries and file capabilities cannot raise its privileges.
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("set no_new_privs: %w", err)
		}
	}
	files := append([]uintptr{0, 1, 2}, s.passFDs...)
	attr := &syscall.SysProcAttr{
		// The task is its own session and process group, so that a
		// forwarded signal reaches its foreground children too.
		Setsid: true,
	}
	if s.Uid != 0 {
		// The init is the task's user already (shedBeforeTask).
		attr.AmbientCaps = capsUintptr(s.Caps)
	} else {
		attr.Credential = &syscall.Credential{Uid: s.Uid, Gid: s.Gid, Groups: s.Groups}
	}
	if err := shedBeforeTask(s); err != nil {
		sup.stop()
		return nil, fmt.Errorf("init: %w", err)
	}
	argv := append([]string{s.Command}, s.Args...)
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Dir: cwd, Env: s.Env, Files: files, Sys: attr})
	if err != nil {
		sup.stop()
		return nil, fmt.Errorf("start %s: %w", s.Command, err)
	}
	sup.pid = pid
	if err := shedAfterTask(s); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		sup.stop()
		return nil, fmt.Errorf("init: %w", err)
	}
	return sup, nil
}

// passedFDs returns the n descriptors the driver passed for the task,
// from firstPassFD on; each must be open.
func passedFDs(n int) ([]uintptr, error) {
	if n < 0 || firstPassFD+n > maxScanFD {
		return nil, fmt.Errorf("the spec passes %d descriptors, want 0 to %d", n, maxScanFD-firstPassFD)
	}
	out := make([]uintptr, 0, n)
	for fd := firstPassFD; fd < firstPassFD+n; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return nil, fmt.Errorf("descriptor %d the driver passed for the task is not open: %w", fd, err)
		}
		out = append(out, uintptr(fd))
	}
	return out, nil
}

// maxScanFD bounds the descriptors inheritedFDs looks at.
const maxScanFD = 1024

func capsUintptr(caps []uint) []uintptr {
	out := make([]uintptr, len(caps))
	for i, c := range caps {
		out[i] = uintptr(c)
	}
	return out
}

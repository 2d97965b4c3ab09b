package exec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
)

// pinnedInit holds descriptors of one init's namespaces and root, opened
// through its /proc directory after checking, through the same directory,
// that the pid is still that init (its start time and cgroup). A /proc
// directory, once open, refers to one process: if it died and its pid
// was reused, opening through it fails rather than reaching the newcomer.
// nsenter is handed these descriptors, never the pid, so a command can
// only ever join the task's namespaces, never the host's.
type pinnedInit struct {
	// files are mnt, uts, ipc, pid, and the root (used as wd too), in
	// that order.
	files []*os.File
}

var pinnedNamespaces = []string{"mnt", "uts", "ipc", "pid"}

func pinInit(pid int, startTicks uint64, cgroup string) (*pinnedInit, error) {
	gone := func(why string) error {
		return fmt.Errorf("%w: the task's init (pid %d) %s", drivers.ErrTaskNotFound, pid, why)
	}
	dfd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, gone("is gone")
	}
	defer unix.Close(dfd)
	stat, err := readAt(dfd, "stat")
	if err != nil {
		return nil, gone("is gone")
	}
	if startTicks != 0 {
		if st, ok := statStartTicks(stat); !ok || st != startTicks {
			return nil, gone("is gone; its pid now belongs to another process")
		}
	}
	cg, err := readAt(dfd, "cgroup")
	if err != nil {
		return nil, gone("is gone")
	}
	if !inCgroup(cg, cgroup) {
		return nil, gone("is not in the task's cgroup; its pid now belongs to another process")
	}
	p := &pinnedInit{}
	for _, ns := range pinnedNamespaces {
		f, err := openAt(dfd, "ns/"+ns, unix.O_RDONLY)
		if err != nil {
			p.close()
			return nil, gone("is gone")
		}
		p.files = append(p.files, f)
	}
	root, err := openAt(dfd, "root", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		p.close()
		return nil, gone("is gone")
	}
	p.files = append(p.files, root)
	return p, nil
}

// addNetNS pins the alloc's network namespace after the root and
// returns nsenter's argument for it (descriptors from first on).
func (p *pinnedInit) addNetNS(path string, first int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		p.close()
		return "", fmt.Errorf("exec: the alloc's network namespace: %w", err)
	}
	p.files = append(p.files, f)
	return "--net=/proc/self/fd/" + strconv.Itoa(first+len(p.files)-1), nil
}

// nsenterArgs names the descriptors as the child sees them, from fd
// first on (os/exec's ExtraFiles numbering).
func (p *pinnedInit) nsenterArgs(first int) []string {
	fd := func(k int) string { return "/proc/self/fd/" + strconv.Itoa(first+k) }
	root := fd(len(pinnedNamespaces))
	return []string{"--mount=" + fd(0), "--uts=" + fd(1), "--ipc=" + fd(2), "--pid=" + fd(3), "--root=" + root, "--wd=" + root}
}

func (p *pinnedInit) close() {
	for _, f := range p.files {
		f.Close()
	}
	p.files = nil
}

func openAt(dfd int, name string, flags int) (*os.File, error) {
	fd, err := unix.Openat(dfd, name, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func readAt(dfd int, name string) (string, error) {
	f, err := openAt(dfd, name, unix.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// statStartTicks is field 22 (starttime) of a /proc/<pid>/stat.
func statStartTicks(stat string) (uint64, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	return n, err == nil
}

// inCgroup reports whether a /proc/<pid>/cgroup lists the task's group.
func inCgroup(procCgroup, name string) bool {
	for _, line := range strings.Split(procCgroup, "\n") {
		if strings.HasSuffix(line, ":/drover/"+name) {
			return true
		}
	}
	return false
}

// initStartTicks reads a live init's start time for the handle.
func initStartTicks(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	n, ok := statStartTicks(string(b))
	if !ok {
		return 0, errors.New("unreadable /proc stat")
	}
	return n, nil
}

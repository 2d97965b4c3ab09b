package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/exec/execinit"
)

// setprivInTask and envInTask are where ExecTask expects util-linux's
// setpriv and coreutils' env inside the task's root (both come with the
// /usr the default chroot_env maps).
const (
	setprivInTask = "/usr/bin/setpriv"
	envInTask     = "/usr/bin/env"
)

// enterPath is the enter process's whole environment when it starts (it
// reads the task's on the sync pipe, see splitEnv). nsenter and setpriv,
// which run as root with every capability, get the task's environment
// without what the loader reads (LD_PRELOAD, LD_LIBRARY_PATH, GCONV_PATH,
// ...: code of the job's choosing); env(1), which setpriv starts only
// after it dropped to the task's user and capabilities, sets those.
const enterPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// ExecCommand runs a command (a script check) where the task
// runs: nsenter(1) joins the init's mount, uts, ipc and pid namespaces
// and its root, and setpriv(1), inside the root, takes on the task's
// user, groups and capabilities and no_new_privs, and env(1), started by
// setpriv after the drop, replaces the environment with the task's
// (nsenter and setpriv themselves see PATH only). A Go process cannot
// join a mount namespace once its runtime has started threads, which is
// why this goes through nsenter rather than the init.
//
// The command joins the task's cgroups before it runs: it is started as
// the init's "enter" mode, which blocks until the driver has moved it,
// then execs nsenter in place.
func (i *isolation) ExecCommand(cfg *drivers.TaskConfig, state json.RawMessage, pid int, command string, args []string) (*osexec.Cmd, func(*osexec.Cmd) error, error) {
	nsenter, err := osexec.LookPath("nsenter")
	if err != nil {
		return nil, nil, errors.New("exec: running a command inside the task needs nsenter (util-linux) on the client's PATH")
	}
	if !i.hasInTask(setprivInTask) {
		return nil, nil, fmt.Errorf("exec: running a command inside the task needs setpriv (util-linux) at %s inside the task's chroot", setprivInTask)
	}
	if !i.hasInTask(envInTask) {
		return nil, nil, fmt.Errorf("exec: running a command inside the task needs env (coreutils) at %s inside the task's chroot", envInTask)
	}
	command = inTask(cfg, command)
	if strings.ContainsRune(command, '=') {
		// env(1) would take it for a variable.
		return nil, nil, fmt.Errorf("exec: command %q: a command run inside the task cannot contain '='; rename it or run it through a shell", command)
	}
	creds, caps, err := i.taskIdentity(cfg)
	if err != nil {
		return nil, nil, err
	}
	st := decodeState(cfg, state)
	pin, err := pinInit(pid, st.InitStartTicks, st.Cgroup)
	if err != nil {
		return nil, nil, err
	}
	argv := append([]string{nsenter}, pin.nsenterArgs(4)...)
	if cfg.NetNSPath != "" {
		// The alloc's network, which the init joined on one thread
		// only: its pid's ns/net may still be the host's.
		arg, err := pin.addNetNS(cfg.NetNSPath, 4)
		if err != nil {
			return nil, nil, err
		}
		argv = append(argv, arg)
	}
	argv = append(argv, "--", setprivInTask)
	argv = append(argv, setprivArgs(creds, caps)...)
	safe, loader := splitEnv(taskEnv(cfg))
	argv = append(argv, "--", envInTask, "--")
	argv = append(argv, loader...)
	argv = append(argv, command)
	for _, a := range args {
		argv = append(argv, inTask(cfg, a))
	}
	syncR, syncW, err := os.Pipe()
	if err != nil {
		pin.close()
		return nil, nil, err
	}
	cmd := osexec.Command(i.exe, argv...)
	cmd.Args[0] = "drover-exec-enter"
	cmd.Env = []string{enterPath, execinit.EnvMarker + "=" + execinit.EnterMode,
		execinit.EnterPassEnv + "=" + strconv.Itoa(len(pin.files))}
	cmd.Dir = "/"
	// fd 3, then the pinned descriptors from 4 (which the command keeps:
	// its own task's namespaces and root, of no use without
	// CAP_SYS_ADMIN, and no way out of the root).
	cmd.ExtraFiles = append([]*os.File{syncR}, pin.files...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	name := st.Cgroup
	var cgFile *os.File
	if dir := i.cg.Dir(name); dir != "" {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			syncR.Close()
			syncW.Close()
			pin.close()
			return nil, nil, fmt.Errorf("exec: open cgroup %s: %w", dir, err)
		}
		cgFile = os.NewFile(uintptr(fd), dir)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	}
	started := func(c *osexec.Cmd) error {
		defer syncW.Close()
		syncR.Close()
		pin.close()
		if cgFile != nil {
			cgFile.Close()
		} else if err := i.cg.Add(name, c.Process.Pid); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		// The task's environment, less what a loader reads, travels on
		// the sync pipe (execinit.EnterMode): it never sits in an argv
		// the host's users can read, only in environments.
		_, err := syncW.Write([]byte(strings.Join(safe, "\x00")))
		return err
	}
	return cmd, started, nil
}

// loaderVars are what glibc's dynamic loader and libc read from the
// environment, and ignore in a privileged (secure-execution) process
// (glibc's unsecvars.h, and every LD_ variable): in nsenter or setpriv,
// which run as root, they would load or run the job's code. The command
// gets them from env(1)'s arguments after the drop; being paths and
// options, not secrets, they may sit in an argv for the moment env runs.
var loaderVars = map[string]bool{
	"GCONV_PATH": true, "GETCONF_DIR": true, "GLIBC_TUNABLES": true, "HOSTALIASES": true,
	"LOCALDOMAIN": true, "LOCPATH": true, "MALLOC_TRACE": true, "NIS_PATH": true, "NLSPATH": true,
	"RESOLV_HOST_CONF": true, "RES_OPTIONS": true, "TMPDIR": true, "TZDIR": true,
	"MALLOC_ARENA_MAX": true, "MALLOC_ARENA_TEST": true, "MALLOC_CHECK_": true, "MALLOC_PERTURB_": true,
	"MALLOC_MMAP_MAX_": true, "MALLOC_MMAP_THRESHOLD_": true, "MALLOC_TOP_PAD_": true, "MALLOC_TRIM_THRESHOLD_": true,
}

// splitEnv separates the loader's variables (see loaderVars) from the
// rest; entries without a name are dropped.
func splitEnv(env []string) (safe, loader []string) {
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "" || strings.ContainsRune(k, 0):
		case strings.HasPrefix(k, "LD_") || loaderVars[k]:
			loader = append(loader, kv)
		default:
			safe = append(safe, kv)
		}
	}
	return safe, loader
}

// setprivArgs gives the command what the task holds, no more.
func setprivArgs(c credentials, caps []uint) []string {
	names := make([]string, 0, len(caps))
	for _, n := range caps {
		for name, num := range capNumbers {
			if num == n {
				names = append(names, "+"+name)
			}
		}
	}
	groups := make([]string, len(c.Groups))
	for k, g := range c.Groups {
		groups[k] = strconv.FormatUint(uint64(g), 10)
	}
	out := []string{"--reuid=" + strconv.FormatUint(uint64(c.Uid), 10), "--regid=" + strconv.FormatUint(uint64(c.Gid), 10)}
	if len(groups) > 0 {
		out = append(out, "--groups="+strings.Join(groups, ","))
	} else {
		out = append(out, "--clear-groups")
	}
	set := strings.Join(append([]string{"-all"}, names...), ",")
	out = append(out, "--bounding-set="+set)
	if c.Uid != 0 {
		out = append(out, "--inh-caps="+set, "--no-new-privs")
		if len(names) > 0 {
			out = append(out, "--ambient-caps="+strings.Join(names, ","))
		}
	} else {
		out = append(out, "--inh-caps=-all")
	}
	return out
}

// hasInTask reports whether an in-task path exists through chroot_env.
func (i *isolation) hasInTask(p string) bool {
	for src, dst := range i.chroot {
		if rel, ok := under(filepath.Clean(dst), p); ok {
			if _, err := os.Stat(filepath.Join(src, rel)); err == nil {
				return true
			}
		}
	}
	return false
}

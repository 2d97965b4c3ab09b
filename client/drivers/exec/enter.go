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

// enterPath is the whole environment of nsenter and setpriv, which run as
// root with every capability: the job's environment (LD_PRELOAD,
// LD_LIBRARY_PATH, GCONV_PATH, ...) would run code of the job's choosing
// inside them. The task's environment is applied by env(1), which setpriv
// starts only after it dropped to the task's user and capabilities.
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
	argv = append(argv, "--", setprivInTask)
	argv = append(argv, setprivArgs(creds, caps)...)
	argv = append(argv, "--", envInTask, "-i", "--")
	for _, kv := range taskEnv(cfg) {
		if k, _, _ := strings.Cut(kv, "="); k != "" {
			argv = append(argv, kv)
		}
	}
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
	cmd.Env = []string{enterPath, execinit.EnvMarker + "=" + execinit.EnterMode}
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
			return nil
		}
		if err := i.cg.Add(name, c.Process.Pid); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		_, err := syncW.Write([]byte{1})
		return err
	}
	return cmd, started, nil
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

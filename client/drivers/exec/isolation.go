package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/exec/execinit"
	"github.com/drover-sched/drover/client/drivers/executor"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/structs"
)

// startTimeout bounds how long StartTask waits for the init to report
// that the task runs (or why it does not).
const startTimeout = 30 * time.Second

// removeTimeout bounds how long DestroyTask retries removing cgroups that
// killed processes have not left yet.
const removeTimeout = 5 * time.Second

// isolation implements executor.Isolation for exec (see doc.go).
type isolation struct {
	cg     cgroups
	chroot map[string]string
	etc    string
	allow  []string
	// allowNamed is whether the client's allow_caps was set, not the
	// default: only then may a non-root task cap_add rootOnlyCaps.
	allowNamed bool
	noLimits   bool
	pids       int64
	exe        string
	exeErr     error
	// probeErr is why a process could not be started in new namespaces.
	probeErr error
	// configErr is Options.ConfigError.
	configErr error
	users     taskuser.Policy
	logger    hclog.Logger

	mu sync.Mutex
	// starting holds the pipes of inits this process started, by task ID,
	// until they exit.
	starting map[string]*initPipes
}

// initPipes are the driver's ends of one init's pipes.
type initPipes struct {
	specW, statusR *os.File
	// childFiles are the init's ends, closed here once it started.
	childFiles []*os.File
	spec       []byte
	cgroup     string
	status     *json.Decoder
}

// handleState is the Isolation part of a task handle: enough to find and
// kill everything of the task after a client restart.
type handleState struct {
	Cgroup        string
	CgroupVersion int
	// InitStartTicks is the init's start time (/proc/<pid>/stat), which
	// tells it from a later process given its pid.
	InitStartTicks uint64 `json:",omitempty"`
}

func newIsolation(opts Options) *isolation {
	allow, err := parseCapList("allow_caps", opts.AllowCaps)
	if err != nil {
		allow = nil // New's caller validated it; refuse every cap_add otherwise
	}
	i := &isolation{
		cg: detectCgroups(opts.CgroupRoot), chroot: opts.ChrootEnv, etc: etcSource(opts.ChrootEnv),
		allow: allow, allowNamed: opts.allowNamed, noLimits: opts.noLimits, pids: opts.PidsLimit, logger: opts.Logger, configErr: opts.ConfigError, starting: map[string]*initPipes{},
	}
	if i.logger == nil {
		i.logger = hclog.NewNullLogger()
	}
	i.users = taskuser.ParsePolicy(nil)
	if opts.Users != nil {
		i.users = *opts.Users
	}
	i.exe = opts.Executable
	if i.exe == "" {
		i.exe, i.exeErr = os.Executable()
		if i.exeErr == nil && !execinit.Dispatches() {
			i.exeErr = fmt.Errorf("%s does not dispatch to the exec init (its main must call execinit.MaybeRun first)", i.exe)
		}
	}
	if i.exeErr == nil && os.Geteuid() == 0 {
		i.probeErr = probeNamespaces(i.exe)
	}
	return i
}

// cgroupName is the task's group under drover/: the alloc ID and task
// name, every byte but letters, digits, '-' and '.' hex-escaped as _xx,
// so that no two tasks of an alloc ("a b", "a:b", "a_b") share a group
// and one's stop kills the other. A name too long for a cgroup keeps its
// start and ends in a hash of the whole.
func cgroupName(cfg *drivers.TaskConfig) string {
	full := cfg.AllocID + "-" + cfg.TaskName
	var b strings.Builder
	for i := 0; i < len(full); i++ {
		switch c := full[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	name := b.String()
	if len(name) > maxCgroupName {
		sum := sha256.Sum256([]byte(full))
		name = name[:maxCgroupName-33] + "-" + hex.EncodeToString(sum[:16])
	}
	return name
}

// maxCgroupName keeps a group's name well within a file name (255).
const maxCgroupName = 200

// taskIdentity resolves the task's user and capabilities from its config.
func (i *isolation) taskIdentity(cfg *drivers.TaskConfig) (credentials, []uint, error) {
	name := cfg.User
	if name == "" {
		name = DefaultUser
	}
	resolve := func(n string) (taskuser.User, error) { return taskuser.LookupFiles(i.etc, n) }
	if err := i.users.Check(Name, name, resolve); err != nil {
		return credentials{}, nil, err
	}
	creds, err := lookupUser(i.etc, name)
	if err != nil {
		return creds, nil, err
	}
	add, err := drivers.ConfigStrings(cfg.Config, "cap_add")
	if err != nil {
		return creds, nil, err
	}
	if add, err = parseCapList(`config "cap_add"`, add); err != nil {
		return creds, nil, err
	}
	drop, err := drivers.ConfigStrings(cfg.Config, "cap_drop")
	if err != nil {
		return creds, nil, err
	}
	if drop, err = parseCapList(`config "cap_drop"`, drop); err != nil {
		return creds, nil, err
	}
	allow := i.allow
	if creds.Uid != 0 && !i.allowNamed {
		allow = withoutCaps(allow, rootOnlyCaps)
	}
	caps, err := taskCaps(allow, add, drop, creds.Uid == 0)
	if err != nil && creds.Uid != 0 && !i.allowNamed {
		err = fmt.Errorf("%w (%s are for root tasks unless the exec plugin's allow_caps names them)", err, strings.Join(rootOnlyCaps, ", "))
	}
	return creds, caps, err
}

func (i *isolation) limits(cfg *drivers.TaskConfig) limits {
	if i.noLimits {
		return limits{}
	}
	r := cfg.Resources
	l := limits{CPUShares: r.CPUShares, PidsLimit: i.pids}
	l.MemoryBytes = r.MemoryMB << 20
	if r.MemoryMaxMB > r.MemoryMB {
		l.MemoryBytes, l.MemorySoftBytes = r.MemoryMaxMB<<20, r.MemoryMB<<20
	}
	cores := make([]string, len(r.Cores))
	for k, c := range r.Cores {
		cores[k] = strconv.Itoa(int(c))
	}
	l.Cores = strings.Join(cores, ",")
	return l
}

// hostPath is where on the host a command named inside the task lives,
// for making a downloaded artifact executable.
func hostPath(cfg *drivers.TaskConfig, command string) string {
	if !filepath.IsAbs(command) {
		return filepath.Join(cfg.TaskDir, command)
	}
	if rel, ok := under(drivers.TaskAllocDir, command); ok && cfg.AllocDir != "" {
		return filepath.Join(cfg.AllocDir, "alloc", rel)
	}
	return filepath.Join(cfg.TaskDir, command)
}

func (i *isolation) Command(cfg *drivers.TaskConfig, command string, args []string, pass int) (*osexec.Cmd, error) {
	if msg := i.unhealthy(); msg != "" {
		return nil, errors.New(msg)
	}
	if cfg.TaskDir == "" {
		return nil, errors.New("exec: the task has no task directory to use as its root")
	}
	if err := checkNamespaceModes(cfg); err != nil {
		return nil, err
	}
	if err := checkVolumeMounts(cfg); err != nil {
		return nil, err
	}
	creds, caps, err := i.taskIdentity(cfg)
	if err != nil {
		return nil, err
	}
	// The task's own directories (local/, secrets/, tmp/) were given to
	// its user by the task runner before anything was written into them
	// (allocdir.TaskDir.Chown).
	// The task dir is the task's "/": every path lookup inside the task
	// starts by searching it, so the task user needs its x bit (not r:
	// searching is not listing).
	if fi, err := os.Stat(cfg.TaskDir); err == nil && fi.Mode().Perm()&0o011 != 0o011 {
		if err := os.Chmod(cfg.TaskDir, fi.Mode().Perm()|0o011); err != nil {
			return nil, fmt.Errorf("exec: make the task dir searchable as the task's root: %w", err)
		}
	}
	command = inTask(cfg, command)
	if strings.ContainsRune(command, '/') {
		if err := executor.MakeExecutable(hostPath(cfg, command), cfg); err != nil {
			return nil, fmt.Errorf("making command %q executable: %w", command, err)
		}
	}
	cwd, err := workDir(cfg)
	if err != nil {
		return nil, err
	}
	mapped := make([]string, len(args))
	for k, a := range args {
		mapped[k] = inTask(cfg, a)
	}
	spec := execinit.Spec{
		Root: cfg.TaskDir, Mounts: chrootMounts(i.chroot, cfg), NetNS: cfg.NetNSPath, Hostname: structs.ShortID(cfg.AllocID),
		Uid: creds.Uid, Gid: creds.Gid, Groups: creds.Groups, Caps: caps, NoNewPrivs: creds.Uid != 0,
		Env: taskEnv(cfg), Cwd: cwd, Command: command, Args: mapped, Pass: pass,
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	name := cgroupName(cfg)
	if err := i.cg.Create(name, i.limits(cfg)); err != nil {
		_ = i.cg.Remove(name)
		return nil, fmt.Errorf("exec: %w", err)
	}
	p := &initPipes{spec: specJSON, cgroup: name}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, err
	}
	p.specW, p.statusR, p.childFiles = specW, statusR, []*os.File{specR, statusW}
	p.status = json.NewDecoder(statusR)

	cmd := osexec.Command(i.exe)
	cmd.Args = []string{"drover-exec-init"}
	cmd.Env = []string{execinit.EnvMarker + "=1", "GOMAXPROCS=1", "GOGC=50"}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{specR, statusW} // fds 3 and 4, see execinit
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: namespaceFlags,
	}
	if dir := i.cg.Dir(name); dir != "" {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("exec: open cgroup %s: %w", dir, err)
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		p.childFiles = append(p.childFiles, os.NewFile(uintptr(fd), dir))
	}
	i.mu.Lock()
	if old := i.starting[cfg.ID]; old != nil {
		old.close()
	}
	i.starting[cfg.ID] = p
	i.mu.Unlock()
	return cmd, nil
}

// namespaceFlags are the namespaces every task gets. The network is the
// alloc's when it has one (TaskConfig.NetNSPath, joined by the init),
// else the host's, as in Nomad's host mode.
const namespaceFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS

// probeNamespaces starts the executable in its probe mode in the task
// namespaces: what the kernel, a seccomp profile or a container around
// the client allows is only known by trying.
func probeNamespaces(exe string) error {
	cmd := osexec.Command(exe)
	cmd.Args = []string{"drover-exec-probe"}
	cmd.Env = []string{execinit.EnvMarker + "=" + execinit.ProbeMode, "GOMAXPROCS=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: namespaceFlags}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (p *initPipes) closeChildFiles() {
	for _, f := range p.childFiles {
		f.Close()
	}
	p.childFiles = nil
}

func (p *initPipes) close() {
	p.closeChildFiles()
	p.specW.Close()
	p.statusR.Close()
}

func (i *isolation) take(id string) *initPipes {
	i.mu.Lock()
	defer i.mu.Unlock()
	p := i.starting[id]
	delete(i.starting, id)
	return p
}

func (i *isolation) get(id string) *initPipes {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.starting[id]
}

// Started confines the init and hands it its spec: v1 cgroups first (v2
// cloned it into its group already), then the spec, which the init waits
// for. It returns once the task runs, or with the init's reason why not.
func (i *isolation) Started(cfg *drivers.TaskConfig, pid int) (json.RawMessage, error) {
	p := i.get(cfg.ID)
	if p == nil {
		return nil, errors.New("exec: internal error: no init pipes for the task")
	}
	p.closeChildFiles()
	if i.cg.Dir(p.cgroup) == "" {
		if err := i.cg.Add(p.cgroup, pid); err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
	}
	_, werr := p.specW.Write(p.spec)
	p.specW.Close()
	if werr != nil {
		return nil, fmt.Errorf("exec: hand the spec to the task's init: %w", werr)
	}
	_ = p.statusR.SetReadDeadline(time.Now().Add(startTimeout))
	var st execinit.Status
	if err := p.status.Decode(&st); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("exec: the task's init exited before it started the task")
		}
		return nil, fmt.Errorf("exec: no word from the task's init: %w", err)
	}
	_ = p.statusR.SetReadDeadline(time.Time{})
	if st.Error != "" {
		return nil, fmt.Errorf("exec: %s", st.Error)
	}
	ticks, err := initStartTicks(pid)
	if err != nil {
		return nil, fmt.Errorf("exec: the task's init: %w", err)
	}
	return json.Marshal(handleState{Cgroup: p.cgroup, CgroupVersion: i.cg.Version(), InitStartTicks: ticks})
}

// Exited reads the init's last word, which carries how the task's main
// process ended (the init's own exit code cannot say it was a signal).
func (i *isolation) Exited(cfg *drivers.TaskConfig, res *drivers.ExitResult) *drivers.ExitResult {
	p := i.take(cfg.ID)
	if p == nil {
		return res
	}
	defer p.close()
	out := *res
	_ = p.statusR.SetReadDeadline(time.Now().Add(time.Second))
	var st execinit.Status
	if err := p.status.Decode(&st); err == nil && st.Exited {
		out.ExitCode, out.Signal = st.ExitCode, st.Signal
	}
	if i.cg.OOMKilled(p.cgroup) {
		out.OOMKilled = true
	}
	return &out
}

func stateCgroup(cfg *drivers.TaskConfig, state json.RawMessage) string {
	return decodeState(cfg, state).Cgroup
}

// decodeState reads the handle's state; an old or empty one gets the
// cgroup name and no start time.
func decodeState(cfg *drivers.TaskConfig, state json.RawMessage) handleState {
	var s handleState
	if len(state) == 0 || json.Unmarshal(state, &s) != nil || s.Cgroup == "" {
		return handleState{Cgroup: cgroupName(cfg)}
	}
	return s
}

func (i *isolation) Kill(cfg *drivers.TaskConfig, state json.RawMessage) {
	if err := i.cg.Kill(stateCgroup(cfg, state)); err != nil {
		i.logger.Warn("could not kill the task's cgroup", "task", cfg.TaskName, "error", err)
	}
}

func (i *isolation) Stats(cfg *drivers.TaskConfig, state json.RawMessage) (*drivers.TaskResourceUsage, error) {
	u, err := i.cg.Usage(stateCgroup(cfg, state))
	if err != nil {
		return nil, fmt.Errorf("exec: sample cgroup: %w", err)
	}
	return &drivers.TaskResourceUsage{MemoryRSS: u.RSS, CPUTotalSeconds: float64(u.CPUNanos) / 1e9, Pids: u.Pids}, nil
}

func (i *isolation) Release(cfg *drivers.TaskConfig, state json.RawMessage) {
	if p := i.take(cfg.ID); p != nil {
		p.close()
	}
	name := stateCgroup(cfg, state)
	if err := removeWhenEmpty(i.cg, name, removeTimeout); err != nil {
		i.logger.Warn("could not remove the task's cgroups", "task", cfg.TaskName, "error", err)
	}
}

// Signal handles what the init cannot forward: SIGSTOP would stop the
// init alone (it cannot be caught), and the SIGCONT that follows must
// reach every process the stop reached; SIGURG and SIGCHLD the init
// cannot tell from its own (the Go runtime preempts with SIGURG, and a
// child's exit raises SIGCHLD), so it never forwards them. These go to
// every process in the task's cgroups, setsid children too (the init
// among them, which ignores SIGURG and reaps on SIGCHLD).
func (i *isolation) Signal(cfg *drivers.TaskConfig, state json.RawMessage, sig syscall.Signal) (bool, error) {
	switch sig {
	case syscall.SIGSTOP, syscall.SIGCONT, syscall.SIGURG, syscall.SIGCHLD:
	default:
		return false, nil
	}
	procs := i.cg.Procs(stateCgroup(cfg, state))
	if len(procs) == 0 {
		return true, fmt.Errorf("%w: the task's cgroups hold no process", drivers.ErrTaskNotFound)
	}
	for _, pid := range procs {
		if err := unix.Kill(pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
			return true, fmt.Errorf("signal %v to pid %d: %w", sig, pid, err)
		}
	}
	return true, nil
}

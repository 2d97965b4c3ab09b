package exec

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/clock"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/executor"
)

// Name is the driver name used in jobspecs.
const Name = "exec"

// DefaultUser runs tasks that do not name a user.
const DefaultUser = "nobody"

// Options configure the exec driver.
type Options struct {
	Logger hclog.Logger
	Clock  clock.Clock
	// Enabled false turns the driver off.
	Enabled bool
	// CgroupRoot is the cgroup v1 mount root; empty means /sys/fs/cgroup.
	CgroupRoot string
}

// New returns the exec driver. It needs root to switch users; without it
// the driver is detected but unhealthy.
func New(opts Options) *executor.Driver {
	if opts.CgroupRoot == "" {
		opts.CgroupRoot = "/sys/fs/cgroup"
	}
	iso := &isolation{root: opts.CgroupRoot, logger: opts.Logger}
	iso.mem = writableController(opts.CgroupRoot, "memory")
	iso.cpu = writableController(opts.CgroupRoot, "cpu")
	attrs := map[string]string{"cgroup.memory": boolAttr(iso.mem), "cgroup.cpu": boolAttr(iso.cpu)}
	unhealthy := ""
	if os.Geteuid() != 0 {
		unhealthy = "exec needs the client to run as root to switch users"
	}
	return executor.New(executor.Options{
		Name: Name, Logger: opts.Logger, Clock: opts.Clock, Enabled: opts.Enabled,
		Attributes: attrs, Unhealthy: unhealthy, DefaultSignal: syscall.SIGINT, Isolation: iso,
	})
}

func boolAttr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// writableController reports whether a cgroup v1 controller is mounted and
// we may create groups in it.
func writableController(root, ctrl string) bool {
	dir := filepath.Join(root, ctrl, "drover")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false
	}
	probe := filepath.Join(dir, ".probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return false
	}
	_ = os.Remove(probe)
	return true
}

type isolation struct {
	root     string
	mem, cpu bool
	logger   hclog.Logger
}

func (i *isolation) Configure(cfg *drivers.TaskConfig, attr *syscall.SysProcAttr) error {
	name := cfg.User
	if name == "" {
		name = DefaultUser
	}
	if os.Geteuid() != 0 {
		return errors.New("exec: the client must run as root to run tasks as another user")
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("exec: user %q: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	// The task must be able to write its own directories.
	for _, sub := range []string{"local", "secrets", "tmp"} {
		_ = os.Chown(filepath.Join(cfg.TaskDir, sub), uid, gid)
	}
	return nil
}

func (i *isolation) group(ctrl string, cfg *drivers.TaskConfig) string {
	return filepath.Join(i.root, ctrl, "drover", cfg.AllocID+"-"+cfg.TaskName)
}

func (i *isolation) Attach(cfg *drivers.TaskConfig, pid int) error {
	if i.mem {
		limit := cfg.Resources.MemoryMaxMB
		if limit < cfg.Resources.MemoryMB {
			limit = cfg.Resources.MemoryMB
		}
		if limit > 0 {
			if err := i.join("memory", cfg, pid, "memory.limit_in_bytes", strconv.FormatInt(limit<<20, 10)); err != nil {
				return err
			}
		}
	}
	if i.cpu && cfg.Resources.CPUShares > 0 {
		shares := max(cfg.Resources.CPUShares, 2)
		if err := i.join("cpu", cfg, pid, "cpu.shares", strconv.FormatInt(shares, 10)); err != nil {
			return err
		}
	}
	return nil
}

// join creates the task's group in one controller, sets its limit, and
// moves the process in. The process runs briefly before it is moved; cgroup
// v1 has no way to start a process inside a group.
func (i *isolation) join(ctrl string, cfg *drivers.TaskConfig, pid int, file, value string) error {
	dir := i.group(ctrl, cfg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("exec: create %s cgroup: %w", ctrl, err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("exec: set %s: %w", file, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("exec: join %s cgroup: %w", ctrl, err)
	}
	return nil
}

func (i *isolation) Release(cfg *drivers.TaskConfig) {
	for _, ctrl := range []string{"memory", "cpu"} {
		if err := os.Remove(i.group(ctrl, cfg)); err != nil && !errors.Is(err, os.ErrNotExist) && i.logger != nil {
			i.logger.Warn("could not remove cgroup", "controller", ctrl, "task", cfg.TaskName, "error", err)
		}
	}
}

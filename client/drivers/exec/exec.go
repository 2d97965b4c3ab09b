package exec

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/executor"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/helper/clock"
)

// Name is the driver name used in jobspecs.
const Name = "exec"

// DefaultUser runs tasks that do not name a user.
const DefaultUser = "nobody"

// DefaultPidsLimit bounds the processes (threads included) of one task
// when the plugin config sets no pids_limit: enough for any sane service,
// few enough that a fork bomb stops long before the node's pid space.
const DefaultPidsLimit = 2048

// Options configure the exec driver.
type Options struct {
	Logger hclog.Logger
	Clock  clock.Clock
	// Enabled false turns the driver off.
	Enabled bool
	// CgroupRoot is where cgroups are mounted; empty means /sys/fs/cgroup.
	CgroupRoot string
	// ChrootEnv is the client's chroot_env (host path to path in the
	// task); empty means DefaultChrootEnv.
	ChrootEnv map[string]string
	// AllowCaps is the plugin config's allow_caps; nil means
	// DefaultAllowCaps.
	AllowCaps []string
	// PidsLimit is the plugin config's pids_limit; 0 means
	// DefaultPidsLimit.
	PidsLimit int64
	// Executable is the binary to start as the task's init; empty means
	// this process's own (os.Executable), which must call
	// execinit.MaybeRun first thing in main.
	Executable string
	// ConfigError is what was wrong with the client's configuration of
	// the driver (PluginOptions' error); the driver is unhealthy with it.
	ConfigError error
	// Users is the client's user.denylist for the drivers it checks; nil
	// means taskuser's defaults (root denied for exec). The task runner
	// checks it before a start; the driver checks again, so no path to
	// StartTask runs a denied user.
	Users *taskuser.Policy

	// allowNamed is set by New when AllowCaps was given.
	allowNamed bool
	// noLimits sets no limits at all: for tests of the v2 group on a
	// hybrid host's unified mount, which has no controllers (and so
	// refuses every limit).
	noLimits bool
}

// PluginOptions reads the exec plugin block's config (allow_caps,
// pids_limit) into o. Unknown keys are the job validator's business.
func (o *Options) PluginOptions(cfg map[string]any) error {
	if cfg == nil {
		return nil
	}
	if _, ok := cfg["allow_caps"]; ok {
		caps, err := drivers.ConfigStrings(cfg, "allow_caps")
		if err != nil {
			return fmt.Errorf("plugin \"exec\" config: %w", err)
		}
		if o.AllowCaps, err = parseCapList(`plugin "exec" config "allow_caps"`, caps); err != nil {
			return err
		}
	}
	n, err := drivers.ConfigInt(cfg, "pids_limit", 0)
	if err != nil {
		return fmt.Errorf("plugin \"exec\" config: %w", err)
	}
	if n < 0 {
		return fmt.Errorf("plugin \"exec\" config \"pids_limit\": %d is negative; use a positive number of processes, or leave it out for %d", n, DefaultPidsLimit)
	}
	o.PidsLimit = n
	return nil
}

// New returns the exec driver. It needs root (for namespaces, mounts,
// cgroups and the user switch); without it the driver is detected but
// unhealthy, and says why.
func New(opts Options) *executor.Driver {
	if opts.CgroupRoot == "" {
		opts.CgroupRoot = "/sys/fs/cgroup"
	}
	if len(opts.ChrootEnv) == 0 {
		opts.ChrootEnv = DefaultChrootEnv
	}
	opts.allowNamed = opts.AllowCaps != nil
	if opts.AllowCaps == nil {
		opts.AllowCaps = DefaultAllowCaps
	}
	if opts.PidsLimit == 0 {
		opts.PidsLimit = DefaultPidsLimit
	}
	iso := newIsolation(opts)
	unhealthy := iso.unhealthy()
	attrs := map[string]string{
		"chroot":         boolAttr(unhealthy == ""),
		"namespaces":     "",
		"cgroup.version": strconv.Itoa(iso.cg.Version()),
		"allow_caps":     strings.Join(iso.allow, ","),
	}
	if unhealthy == "" {
		attrs["namespaces"] = "mnt,pid,ipc,uts"
	}
	ctrls := iso.cg.Controllers()
	for _, c := range []string{"memory", "cpu", "pids", "cpuset", "freezer"} {
		attrs["cgroup."+c] = boolAttr(ctrls[c] && os.Geteuid() == 0)
	}
	caps := drivers.Capabilities{FSIsolation: drivers.FSIsolationChroot, UserEtc: iso.etc}
	return executor.New(executor.Options{
		Name: Name, Logger: opts.Logger, Clock: opts.Clock, Enabled: opts.Enabled,
		Attributes: attrs, Unhealthy: unhealthy, DefaultSignal: syscall.SIGINT, Isolation: iso,
		Capabilities: &caps,
	})
}

func boolAttr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// unhealthy says why tasks cannot run here, or "".
func (i *isolation) unhealthy() string {
	if i.configErr != nil {
		return i.configErr.Error()
	}
	if os.Geteuid() != 0 {
		return "exec needs the client to run as root (for namespaces, the chroot, cgroups and the task user)"
	}
	var missing []string
	for _, ns := range []string{"mnt", "pid", "ipc", "uts"} {
		if _, err := os.Stat("/proc/self/ns/" + ns); err != nil {
			missing = append(missing, ns)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "exec needs " + strings.Join(missing, ", ") + " namespaces, which this kernel lacks"
	}
	if i.exeErr != nil {
		return "exec cannot find its own executable to start task inits: " + i.exeErr.Error()
	}
	if i.probeErr != nil {
		return "exec cannot start a process in new mount, pid, ipc and uts namespaces: " + i.probeErr.Error()
	}
	if err := checkChrootEnv(i.chroot); err != nil {
		return err.Error()
	}
	return ""
}

// Package exec is the exec driver: a task isolated the way Nomad's exec
// isolates one, on top of the executor's process tracking.
//
// # What a task gets
//
//   - An init as pid 1 (package execinit): the drover binary started again
//     in new mount, pid, ipc and uts namespaces. The driver places it in
//     every cgroup of the task before it hands it its spec, so the task's
//     first instruction already runs confined (joining after the start let
//     a child forked at once escape the memory limit). When the task's main
//     process exits the init exits, and the kernel kills whatever is left
//     in the namespace: setsid children and double-forked daemons too.
//   - A root: the task directory, with the client's chroot_env bound
//     read-only in the init's private mount namespace (so nothing is ever
//     mounted on the host, and the alloc-dir GC cannot follow a mount), the
//     alloc dir at /alloc, a fresh /proc, a minimal /dev; no /sys. /etc is
//     never bound whole, whatever chroot_env says: a tmpfs gets copies of
//     EtcCopy's files (and read-only binds of its directories), never
//     shadow, gshadow, sudoers or ssl/private.
//   - Nothing a task can write or reach holds a working device node or a
//     setuid file: the task dir's bind, /alloc, /dev's tmpfs and every
//     chroot_env bind are nosuid and nodev, recursively (mount_setattr
//     with AT_RECURSIVE; each mount of /proc/self/mountinfo on kernels
//     before 5.12), and read-only binds are read-only with every host
//     submount under them. On cgroup v1 a devices cgroup allows only
//     null, zero, full, random, urandom, tty, ptmx and ptys
//     (allowedDevices); v2 has no devices file and Drover loads no BPF
//     device program, so there nodev is the guard. With mknod (a root
//     task's default) a node for the host's disk would otherwise open.
//   - /proc without the host's knobs: sys, sysrq-trigger, irq and bus are
//     bound read-only (a uid 0 task could otherwise set core_pattern and
//     run code as host root); kcore, keys, timer_list, timer_stats,
//     sched_debug, latency_stats (bound to /dev/null), acpi and scsi
//     (empty read-only tmpfs) are masked, as runc masks them.
//   - The uts namespace's hostname: the alloc's short ID.
//   - Its own pid and ipc namespaces, always: pid_mode and ipc_mode other
//     than "private" fail StartTask (the host's are not offered).
//   - cgroups (cgroup.go; v1 on these machines, v2 where unified): memory
//     (memory_max when set, else memory; memsw/swap.max so swap does not
//     bypass it), cpu shares (cpu.weight on v2), cores as cpuset.cpus, a
//     pids limit (DefaultPidsLimit unless the plugin's pids_limit), and the
//     freezer (v2: cgroup.kill) to kill every process at once. TaskStats
//     reads the cgroups, not the process tree. A memory, pids or cpuset
//     limit whose controller is missing fails Create (and so StartTask)
//     rather than run the task unbounded; cpu shares, a weight, do not.
//     A group's name is the alloc ID and task name with every other byte
//     hex-escaped (cgroupName), so no two tasks share one.
//   - The task user (default nobody), resolved against the passwd file the
//     task's /etc is copied from, with no capabilities: permitted,
//     effective, inheritable and ambient empty, bounding set cut to what
//     the task holds, and no_new_privs so setuid binaries and file
//     capabilities cannot raise them. cap_add may add what the plugin's
//     allow_caps allows (as ambient capabilities); root gets allow_caps less
//     cap_drop. A cap_add outside allow_caps fails StartTask naming what is
//     allowed, and the fingerprint advertises allow_caps. A non-root
//     task may cap_add mknod, setuid and setgid (rootOnlyCaps) only when
//     the client sets allow_caps and names them.
//   - An init that holds nothing worth taking once the task runs (see
//     execinit): not dumpable; a non-root task's init is the task's uid
//     with no capabilities; a root task's keeps CAP_KILL only.
//
// # What it does not get
//
// Its own network: without a group network namespace
// (TaskConfig.NetNSPath, set for the bridge, none and cni/* modes) the
// task shares the host's, as in Nomad's host mode; with one, the init
// joins it before it forks the task, and a command run inside the task
// joins it too. The task's directory on the host is the task's own
// to write; mount points for the chroot appear there as empty
// directories.
//
// # Paths
//
// The task runner names the task's directories by host path; the driver
// rewrites environment values and arguments under the task or alloc
// directory to their in-task paths (NOMAD_TASK_DIR=/local and so on). The
// working directory is work_dir (absolute, inside the chroot; a host path
// of the task's directories is mapped), else /; a missing one fails the
// start. The command is resolved inside the chroot.
//
// # Stop, re-attach, exec
//
// StopTask and SignalTask signal the init, which forwards the signal to
// the task's process group; after kill_timeout the driver kills the init
// and every process in the task's cgroups. SIGSTOP, which the init cannot
// catch to forward, the SIGCONT after it, and SIGURG and SIGCHLD, which
// it cannot tell from its own (the Go runtime preempts with SIGURG, a
// child's exit raises SIGCHLD), go straight to every process in the
// cgroups. The handle keeps the init's pid, start time and cgroup, so a
// restarted client re-attaches and still kills the whole task.
//
// ExecTask (script checks) runs through nsenter into the init's
// namespaces and root and setpriv (inside the root) into the task's
// credentials and capabilities, after joining its cgroups. Both run as
// root with every capability and are dynamically linked, so they get the
// task's environment less what the loader and libc read (loaderVars:
// LD_*, GCONV_PATH, ...; a job's LD_PRELOAD would otherwise run as root);
// the chroot's env(1), which setpriv starts after the drop, sets those.
// The environment reaches the enter process on its sync pipe, never in
// an argv the host's users could read. nsenter gets descriptors of the init's namespaces and root,
// opened through its /proc directory after checking, through the same
// directory, its start time and cgroup (pin.go): a pid the init left and
// another process took is refused, never joined. The command keeps those
// descriptors (its own task's, of no use without CAP_SYS_ADMIN).
//
// # Cost
//
// The init's anonymous memory, charged to the task, is about 2.2 MB for a
// test binary and 3.5 MB for the drover binary (its file pages, 7-16 MB,
// are the executable's, shared through the page cache). Starting a task to
// its first output takes about 15-25 ms at the median and 40-100 ms at
// p99 on two busy shared cores, against under 2 ms (p99 5 ms) for
// raw_exec (BenchmarkStartToFirstOutput, BenchmarkStartManyTasks).
//
// The driver holds no state beyond the executor's and, per task it
// started, the init's status pipe until the task exits.
package exec

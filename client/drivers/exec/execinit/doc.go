// Package execinit is the init of an exec task: the drover binary itself,
// started again by the exec driver in new mount, pid, ipc and uts
// namespaces, that becomes the task's pid 1.
//
// # Order of events
//
//  1. The driver starts the init (EnvMarker set, MaybeRun dispatches)
//     with a spec pipe (SpecFD) and a status pipe (StatusFD).
//  2. The driver writes the init's pid into every cgroup of the task
//     (on cgroup v2 the init is cloned straight into its cgroup), and
//     only then writes the Spec and closes the pipe. The init blocks
//     reading it, so nothing the task runs ever runs outside the cgroups.
//  3. The init builds the root in its private mount namespace (binds of
//     the client's chroot_env, read-only; /etc as a tmpfs with copies of
//     the few files tasks need; a fresh /proc; a minimal /dev), pivots
//     into it, sets the hostname, resolves the command inside the new
//     root, cuts the capability bounding and inheritable sets, sets
//     no_new_privs for non-root tasks, makes itself undumpable, and forks
//     and execs the task with its credentials. Every bind is nosuid and
//     nodev, recursively, and read-only ones are read-only all the way
//     down (mountattr.go); /dev is nodev; /proc's host knobs are
//     read-only and its kernel-memory and timing files masked (root.go).
//  4. The init sheds its privileges (privs.go): for a non-root task it
//     takes the task's uid and gids before the fork, so every thread
//     loses every capability (the forking thread holds the task's own
//     for the fork and drops them after) and it can still signal the
//     task; a root task's init keeps uid 0 and CAP_KILL only (on every
//     thread without cgo; on its main, signalling thread with cgo, since
//     Go can set capabilities on all threads only without it). The main
//     goroutine is locked to its thread so the bounding-set cut, the
//     fork and the signals all happen on it.
//  5. Any failure up to the exec is written on the status pipe as a
//     Status with Error, which the driver returns from StartTask. A
//     started task is announced with its pid.
//  6. The init stays as pid 1: it forwards every catchable signal but
//     SIGURG and SIGCHLD (the runtime's own, and a child's exit; the
//     driver sends those to the task itself) to the task's process
//     group, reaps orphans, and when the task's main
//     process exits writes a last Status (exit code, signal) and exits
//     with the task's code. The kernel then kills what is left in the
//     namespace.
//
// # Cost
//
// The init runs with GOMAXPROCS=1, GOGC=50 and, once the task runs, a
// 4 MiB soft memory limit (set earlier, the collector would run at every
// allocation of the setup and slow each start several times). Its
// anonymous memory, charged to the task's memory cgroup, is 2-3.5 MiB; its
// file pages are the executable's, shared (see the exec driver's doc).
// Before the fork it gives back its free heap and the executable's pages
// it touched for the setup (shrink.go), and after it leaves the OOM
// killer's choice where it may (oom.go): the OOM killer weighs file pages
// too, and pid 1 must not be the process it takes.
//
// # Other modes
//
// EnterMode (ExecTask: wait to be placed in the cgroups, then exec
// nsenter with PATH only and the driver's namespace descriptors) and ProbeMode (the fingerprint's namespace check) share the
// dispatch.
package execinit

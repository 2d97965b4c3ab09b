// Package executor runs tasks as plain processes for the raw_exec and exec
// drivers: start in a new process group, wait for exit through a pidfd,
// signal the whole group, re-attach to a process a previous client started.
//
// # Isolation
//
// raw_exec runs the task's command itself, with no isolation: the task
// sees the host and runs as the client's user. exec passes an Isolation,
// and the process the executor starts, waits for and signals is then
// exec's init (see the exec package): the task runs in its own
// namespaces, root and cgroups beneath it, the executor's signals reach
// the task through it, and killing it kills everything the task started.
// The Isolation also supplies stats (from cgroups), the kill of every
// process in the task's cgroups, ExecTask's command and the exit's signal
// and OOM kill, which the init's exit code cannot carry.
//
// # Why a process group
//
// A task is usually a shell or a supervisor that forks. Killing only the
// pid would leave its children running, holding ports and files. Each task
// is its own process group (Setpgid), and every signal goes to the group.
//
// # A signal can be lost to a shell that is starting
//
// The kill signal goes to the group once. A task that is a shell may not
// have started its command yet: dash, run with -c, catches SIGINT (raw_exec's
// default kill signal) while it starts, and a shell with a trap defers the
// trap until its foreground command returns. Either way the command the
// shell then starts was not in the group when the signal came, never sees
// it, and runs on. This is the task's doing, not the executor's, and the
// same for a re-attached task; the SIGKILL to the group after kill_timeout
// is what guarantees that a stopped task ends.
//
// # Waiting without being the parent
//
// A restarted client is not the parent of the tasks it re-attaches to, so
// it cannot wait(2) for them. It verifies a stored pid still names the same
// process (the start time in /proc/<pid>/stat must match the stored one),
// opens a pidfd, and polls it: the pidfd becomes readable when the process
// exits, with no polling loop and no race with pid reuse. The exit code of
// a process that is not our child is unknown, and is reported as such. On
// kernels without pidfd_open the waiter checks /proc on an interval of the
// injected clock instead.
//
// # Logs survive a client restart
//
// A task's stdout and stderr are FIFOs the task runner reads. If the only
// reader (the client) went away, the task's next write would kill it with
// SIGPIPE. So the task also inherits a read end of each FIFO as fd 3 and 4,
// which it never reads: while the client is down, writes block once the
// pipe buffer is full instead of killing the task, and the restarted client
// re-opens the FIFOs and drains them.
//
// # Goroutines
//
// The Driver owns one waiter goroutine per task. Shutdown stops them all
// (the processes keep running) and waits for them.
package executor

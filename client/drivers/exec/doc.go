// Package exec is the exec driver: a process like raw_exec, but run as the
// task's user (default nobody) and, where the cgroup v1 memory and cpu
// controllers are writable, confined to the task's memory and CPU grant
// under /sys/fs/cgroup/{memory,cpu}/drover/<alloc>-<task>.
//
// Isolation is best effort and says what it does: the fingerprint
// advertises driver.exec.cgroup.memory / .cpu as "1" or "0", so an operator
// (or a constraint) can tell a confined node from one that is not. There is
// no chroot or namespace isolation yet.
//
// The driver holds no state beyond the executor's and a read-only view of
// which controllers were usable at start.
package exec

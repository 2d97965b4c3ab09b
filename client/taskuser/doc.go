// Package taskuser decides which user a task runs as and whether the
// client allows it.
//
// A task's `user` is refused when its driver is in the client option
// user.checked_drivers (default "exec,qemu,java", as in Nomad, whose
// container drivers are left out: their root is the container's) and the
// user is in user.denylist (default "root,Administrator", as in Nomad). An empty user is the driver's
// default: "nobody" for a driver that isolates the file system (exec),
// the client's own user for one that does not (raw_exec), and unknown
// (not checked here) for an image driver, whose default is the image's.
//
// The client checks at every start (the task runner's user hook) and
// also advertises both settings as node attributes of the same names,
// so the scheduler refuses the node before placing the task there
// (scheduler/feasible's userChecker). The package holds no state.
package taskuser

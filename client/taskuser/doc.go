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
// A user is denied by name and by uid: the task's user and each
// denylisted name are resolved as the driver resolves them (LookupFiles
// on the passwd and group files its tasks' /etc is copied from, for a
// driver that names them in Capabilities.UserEtc; the host's NSS
// otherwise), and a user whose uid is a denylisted name's is refused, so
// "0" or another uid-0 name (toor) does not pass a denylist holding
// root. root stands for uid 0 even where the files lack it. The task
// runner then owns the task's directories to the uid the same resolver
// gave.
//
// The client checks at every start (the task runner's user hook) and
// also advertises both settings as node attributes of the same names,
// so the scheduler refuses the node before placing the task there
// (scheduler/feasible's userChecker). The scheduler knows names and
// well-known uids only (a numeric user "0" where root is denied); the
// client's check by resolved uid is the authority. The package holds no state.
package taskuser

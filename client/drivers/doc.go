// Package drivers defines the small interface between a task runner and the
// thing that actually runs a task (a process, a container, a simulation),
// and the value types that cross it.
//
// Sub-packages implement it: rawexec (a plain process in its own process
// group), exec (the same with a user switch and cgroup limits), mock (no
// process at all, for tests and large simulations). executor holds the
// process machinery rawexec and exec share: starting, waiting through a
// pidfd, signalling the process group, re-attaching after a client restart.
//
// A driver's config keys and their shapes are declared once, in structs
// (driver_config_<name>.go, e.g. structs.DriverConfigCommand), where job
// validation checks every task's config against them; a driver reads its
// config under those constants, so a key cannot be accepted at
// registration and then be ignored, or be missing, on a client.
//
// A driver owns its tasks' runtime state (a map of task ID to handle,
// guarded by its own mutex). The task runner owns the decision of when to
// start, stop and destroy; a driver never restarts anything by itself.
package drivers

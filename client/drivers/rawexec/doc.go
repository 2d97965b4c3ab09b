// Package rawexec is the raw_exec driver: the task's command runs as a
// plain process with the client's user and no isolation, in its own process
// group so that stopping the task reaches every process it forked.
//
// Like Nomad, raw_exec is off unless the operator enables it, because it
// runs job-supplied commands with the client's privileges. The driver has
// no state of its own beyond the executor's (see executor's doc.go).
package rawexec

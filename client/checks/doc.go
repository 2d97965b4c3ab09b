// Package checks runs an allocation's service checks on the client: the
// `check` blocks of its group- and task-level services, of type http, tcp
// and script, each at its interval with its timeout, and applies their
// `check_restart` blocks. Their results feed the alloc's health when its
// update or migrate block says health_check = "checks", answer
// GET /v1/client/allocation/:id/checks, and show in `alloc status`.
//
// Drover has no Consul, so every service's checks run here, whatever its
// provider: a job written for Nomad with Consul checks is judged by the
// same checks.
//
// # Ownership
//
// A Runner belongs to one alloc runner, which starts it once the tasks
// are started and stops it when they stop (or the alloc is killed, or the
// client shuts down). A Runner's checks are fixed: when an update of the
// alloc changes them, the alloc runner stops it and starts a new one. It runs one goroutine per check and nothing else;
// Stop cancels them and waits for them. Each goroutine alone writes its
// check's result, under the Runner's lock; readers get copies. Intervals
// and check_restart's grace are timed on the injected clock; a probe's
// timeout is real time, because it bounds real I/O.
//
// # Bounds
//
// A check's output (a response body, a script's output) is cut at
// MaxOutput bytes; a probe never runs longer than its timeout (a script
// and everything it started are killed then); an interval below
// MinInterval is raised to it, so no job can make a client spin.
package checks

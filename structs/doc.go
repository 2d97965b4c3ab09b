// Package structs holds the types every part of Drover shares: jobs, nodes,
// allocations, evaluations, plans and deployments, the RPC request and
// response envelopes, and the raft message types.
//
// The JSON shape of every type follows Nomad's v1 HTTP API (PascalCase field
// names, durations as integer nanoseconds) so that the HTTP layer can encode
// these values directly and Nomad's own Go client can decode them.
//
// structs imports no other Drover package. Everything here is plain data plus
// the rules that belong to the data itself: validation, defaults, copies, the
// allocation state machine, and the resource arithmetic used by both the
// scheduler and the plan applier. Values read from the state store are shared
// and immutable: call Copy before changing one.
//
// Validation (Job.Validate) is the one gate job validate, job plan and
// registration all pass through, so a job refused by one is refused by
// all with the same message. Beyond the fields' own rules it keeps a job
// within what it asked for: task names that would collide with the
// allocation directory's layout are refused (names.go), template perms
// may not carry setuid, setgid or sticky bits (template.go), a task's log
// storage must be less than the group's ephemeral disk (log_storage.go),
// and a task's driver config must match its driver's schema
// (driver_config.go). Each built-in driver declares its config keys once,
// in its own file (driver_config_exec.go, driver_config_docker.go, driver_config_mock.go) that
// registers a DriverConfigSchema from init; the client's drivers read
// their config under the same key constants. Adding a driver's schema is
// one such file.
package structs

// Package api is Drover's Go client package for the HTTP API.
//
// Its types follow the JSON shape of Nomad's v1 API field for field:
// PascalCase names identical to Nomad's, durations as integer nanoseconds,
// and optional scalars as pointers. The pointers are deliberate: a job
// submitted by a user must be able to say "not set" (nil) apart from "set to
// the zero value" (0, "", false), because the two mean different things once
// defaults are applied. Canonicalize methods fill in the defaults; the server
// relies on them having run, and the jobspec parser deliberately does not run
// them, so callers choose when defaults are applied.
//
// Because the shapes match, a job encoded by Nomad's own Go client (or taken
// from `nomad job inspect`) decodes into these types, and the other way round.
// Drover adds fields where it goes further; it does not rename or reinterpret
// Nomad's.
//
// Files are split by concept: job.go holds Job, task_group.go TaskGroup,
// task.go Task, and each policy or resource block has its own file.
package api

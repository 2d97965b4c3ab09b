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

// # Client
//
// NewClient returns a Client for one agent's HTTP API; each endpoint family
// hangs off it (Jobs, Nodes, Allocations, Evaluations, Deployments, Status,
// Agent, Operator, System), as in Nomad's client. Reads take QueryOptions
// and return a QueryMeta filled from the X-Nomad-* headers; setting
// WaitIndex (and WaitTime) makes a read a blocking query, which is how the
// CLI watches an evaluation or a drain without polling. Any non-2xx answer
// is an *UnexpectedResponseError carrying the status code and the agent's
// message. The read types (Allocation, Node, Evaluation, ...) are plain
// values rather than pointers, since responses are never partial.

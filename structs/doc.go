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
package structs

// Package jobspec parses job files, written in Nomad's HCL2 job syntax, into
// *api.Job.
//
// A job file is HCL native syntax, HCL's JSON syntax, or the JSON the HTTP
// API takes (`{"Job": {...}}`, or the job object alone). Parse and
// ParseWithConfig tell them apart by content.
//
// # Evaluation
//
// Expressions are evaluated at parse time, with `var.*` (input variables),
// `local.*` (locals) and HCL functions in scope. Variable values come, from
// weakest to strongest, from the declaration's default, NOMAD_VAR_<name>
// environment variables, variable files in order, and -var arguments in
// order.
//
// Interpolations that only the client can resolve, such as
// ${NOMAD_PORT_http}, ${attr.kernel.name}, ${node.unique.id} or ${meta.rack},
// are kept in the result as literal text. Any reference whose root name is
// not defined at parse time is such a runtime reference, as in Nomad. The
// parser binds each one to a placeholder string "${<reference>}" for the
// duration of one expression, so "${NOMAD_ALLOC_DIR}/data" evaluates to
// itself, and a runtime reference can even pass through string functions.
// A runtime reference used where a real value is needed (count =
// attr.cpu.numcores) is an error.
//
// # What the parser does not do
//
// It does not apply defaults; call (*api.Job).Canonicalize for that. It does
// what Nomad's parser also does: the job's ID and Name come from the job
// block's label, ports with a static value become reserved ports, a single
// cron spec gets the spec type "cron", and templates get their change mode,
// permissions, splay and missing-key defaults.
//
// Blocks Drover does not model (vault, consul, connect, identity,
// csi_plugin, multiregion, a task's scaling blocks, ...) are skipped with a
// warning that names each one (see ignored.go); any other unknown block or
// argument is an error.
//
// # Bounds
//
// A file nesting deeper than MaxNestingDepth (blocks, lists, objects,
// parentheses, templates and chained operators together) is refused
// before HCL's recursive parsers see it, with an error at the line where it
// went too deep: a stack overflow cannot be recovered, and the parser also
// serves the agent's /v1/jobs/parse endpoint. CheckNesting is exported for
// other HCL and JSON readers (the agent's configuration files). A group's scaling block is decoded: its min and
// max bound the group's count and every scaling request.
package jobspec

// Package taskenv builds a task's environment (the NOMAD_* variables, the
// job's meta, the task's own env block) and interpolates ${...} references
// in driver config and env values.
//
// Interpolation resolves, in order: ${attr.X} (node attributes), ${meta.X}
// (node meta), ${node.unique.id|unique.name|datacenter|class|pool|region},
// ${env.X} (the task's environment) and a bare ${NAME} (a variable of the
// task's environment such as NOMAD_PORT_http). A reference that resolves to
// nothing is left as written, so a typo shows up in the task's arguments
// instead of silently becoming an empty string.
//
// An Env is immutable once built; it has no goroutines.
package taskenv

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
// What a task inherits of the agent's own environment depends on its
// driver (host.go): a driver with drivers.Capabilities.HostEnv (raw_exec)
// passes the agent's environment on, less DefaultDenylist (Nomad's
// default env.denylist: Consul, Vault, AWS and Google credentials, plus
// NOMAD_TOKEN and DROVER_TOKEN) and the client's env.denylist on top; any
// other driver's task gets only PATH (DefaultPath if the agent has none),
// LANG, LANGUAGE, LC_* and TZ from it, and otherwise only what Drover
// builds: NOMAD_*, the job's env block, templates with env = true. The
// directories NOMAD_ALLOC_DIR, NOMAD_TASK_DIR and NOMAD_SECRETS_DIR name
// follow the driver's file system isolation: host paths without one,
// /alloc, /local and /secrets in a chroot or an image (Env.WithDirs gives
// the host paths back for the client's own writes).
//
// An Env is immutable once built; it has no goroutines.
package taskenv

// Package template renders a task's `template` blocks before the task
// starts, as Nomad's client does with consul-template, for everything that
// needs no outside system.
//
// # What is rendered
//
// A template is Go text/template text in consul-template's dialect: its
// delimiters (left_delimiter/right_delimiter), its missing-key behaviour
// (error_on_missing_key) and its helper functions, under their names and
// with their argument orders (funcs.go lists them). The text comes from
// `data`, or from `source`, a file on the client. It is rendered to
// `destination` with `perms` (and `uid`/`gid` when the client runs as
// root); of perms only the permission bits are applied, never setuid,
// setgid or sticky, which job validation refuses too. A template with
// `env = true` is then read as an env file (envfile.go) and its variables
// are added to the task's environment.
//
// `env` reads the task's environment (Input.Env), never the agent's:
// what the agent's environment holds reaches a template only as far as
// it reaches the task (see taskenv). A rendered file never keeps the
// setuid, setgid or sticky bit, whatever `perms` says (job validation
// refuses them; this is the defence behind it). For a task its driver
// runs as another user than the client's (Input.Owner), the file and any
// directory the render creates for it under a directory the task writes
// anyway (its local/, secrets/, tmp/, alloc/data, alloc/tmp) are that
// user's; a directory created elsewhere (the task directory's root,
// alloc/) stays the client's, so that a template cannot hand the task a
// place the client trusts. The client's own places (a task's artifact
// markers, alloc/logs: allocdir.Reserved) are refused as destinations,
// also when a symlink leads there. `uid`/`gid`
// may only name that user and its group: a job cannot make a file owned
// by root, or by another task's user, through a template. A task run as
// the client's own user (raw_exec) may name any owner, as in Nomad: it
// could chown the file itself.
//
// Drover has no Consul, Vault or Nomad variables behind its templates.
// Functions that read from one (key, service, secret, nomadVar, ...) are
// known by name: a template that calls one is refused before anything is
// rendered, with a message naming the function and the system it needs
// (external.go), rather than blocking forever or rendering an empty value.
//
// Nomad's native service catalog it has: nomadService and nomadServices
// (funcs_services.go) read the registrations of the task's namespace,
// which the agent reads from the servers before the render (ServiceData)
// because the render child cannot call them.
//
// # Paths
//
// As in Nomad, source and destination are interpolated with the task's
// environment; relative paths start at the task directory (<alloc>/<task>),
// and a destination that lies outside is moved inside it ("/etc/app.conf"
// becomes <task dir>/etc/app.conf). A template may read and write only
// inside the task directory and the alloc's shared directory; so may the
// `file` function. The check is made on what the kernel opened, not on the
// path text (sandbox.go), so a symlink a task left behind cannot send a
// render, which runs as the client's user, elsewhere.
//
// # When
//
// The task runner renders every template before each start of the task,
// restarts included. Apart from the service catalog, all sources are
// static (data, files in the alloc dir, the environment and the clock), so
// a template that reads no service is never rendered while the task runs.
// One that calls nomadService or nomadServices is rendered again whenever
// the registrations of the task's namespace change (the task runner
// watches them with a blocking query); if its output changed, its
// change_mode applies: restart, signal with change_signal, or noop
// (change_mode script is not supported and leaves the task alone).
// RenderChanged says which outputs changed. splay and `wait` are accepted
// and not applied.
//
// # Where
//
// A template is a program its job's author wrote, and a Go template
// cannot be stopped once it runs, so the task runner never calls Render
// in the client's process: a Renderer (renderer.go) renders all templates
// of one task start in one child process of the agent's own executable
// (helper/childproc, entry child.go), under a heap limit, a deadline, one
// core and a bound on concurrent renders. The child renders with Render
// itself, so it reads and writes through the same sandbox; what it cannot
// read there (the task's environment, the interpolated paths, the clock)
// the agent sends it. Stopping the task kills the child at once.
package template

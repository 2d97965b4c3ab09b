package taskenv

// With returns a copy of the environment with vars set on top of it. The
// task runner adds the variables of `env = true` templates this way, last,
// as Nomad does: they override the task's env block, and interpolation of
// the driver config (${VAR}) sees them.
func (e *Env) With(vars map[string]string) *Env {
	c := &Env{vars: make(map[string]string, len(e.vars)+len(vars)), node: e.node}
	for k, v := range e.vars {
		c.vars[k] = v
	}
	for k, v := range vars {
		c.vars[k] = v
	}
	return c
}

// WithDirs returns a copy of the environment whose NOMAD_ALLOC_DIR,
// NOMAD_TASK_DIR and NOMAD_SECRETS_DIR name dirs. A task in a chroot sees
// its directories at /alloc, /local and /secrets; the client, writing a
// template or an artifact for it, interpolates the destination with the
// host paths instead.
func (e *Env) WithDirs(d Dirs) *Env {
	return e.With(map[string]string{"NOMAD_ALLOC_DIR": d.AllocDir, "NOMAD_TASK_DIR": d.TaskDir, "NOMAD_SECRETS_DIR": d.SecretsDir})
}

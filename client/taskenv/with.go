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

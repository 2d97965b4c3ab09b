package taskenv

import (
	"strings"

	"github.com/drover-sched/drover/structs"
)

// ReplaceEnv interpolates every ${...} in s.
func (e *Env) ReplaceEnv(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		ref := s[i+2 : i+2+j]
		b.WriteString(s[:i])
		if v, ok := e.lookup(strings.TrimSpace(ref)); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
}

func (e *Env) lookup(ref string) (string, bool) {
	n := e.node
	switch {
	case strings.HasPrefix(ref, "attr."):
		if n == nil {
			return "", false
		}
		v, ok := n.Attributes.Get(ref[len("attr."):])
		return v, ok
	case strings.HasPrefix(ref, "meta."):
		if n == nil {
			return "", false
		}
		v, ok := n.Meta[ref[len("meta."):]]
		return v, ok
	case strings.HasPrefix(ref, "env."):
		v, ok := e.vars[ref[len("env."):]]
		return v, ok
	case strings.HasPrefix(ref, "node."):
		return nodeValue(n, ref[len("node."):])
	}
	v, ok := e.vars[ref]
	return v, ok
}

func nodeValue(n *structs.Node, key string) (string, bool) {
	if n == nil {
		return "", false
	}
	switch key {
	case "unique.id":
		return n.ID, true
	case "unique.name":
		return n.Name, true
	case "datacenter":
		return n.Datacenter, true
	case "class":
		return n.NodeClass, true
	case "pool":
		return n.NodePool, true
	case "region":
		v, ok := n.Attributes.Get("nomad.region")
		return v, ok
	}
	return "", false
}

// ParseConfig returns a copy of a driver config with every string, at any
// depth, interpolated.
func (e *Env) ParseConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = e.parseAny(v)
	}
	return out
}

func (e *Env) parseAny(v any) any {
	switch x := v.(type) {
	case string:
		return e.ReplaceEnv(x)
	case []string:
		c := make([]string, len(x))
		for i, s := range x {
			c[i] = e.ReplaceEnv(s)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, s := range x {
			c[i] = e.parseAny(s)
		}
		return c
	case map[string]any:
		return e.ParseConfig(x)
	case []map[string]any:
		c := make([]map[string]any, len(x))
		for i, m := range x {
			c[i] = e.ParseConfig(m)
		}
		return c
	}
	return v
}

package taskenv

import (
	"os"
	"strings"
)

// What a task gets of the agent's own environment. The agent's process
// often carries credentials (cloud keys, Consul and Vault tokens, a
// database password an init script exported): none of them is the
// task's. The base is chosen by the driver's capabilities:
//
//   - HostEnv, for a driver that passes the agent's environment on
//     (raw_exec, and any driver that declares no capabilities): all of
//     it except the client's env.denylist, which adds to
//     DefaultDenylist.
//   - IsolatedBase, for a driver that does not (exec): only
//     IsolatedVars, with a default PATH when the agent has none.
//   - none, for a task in an image (docker): the image's ENV is its
//     base, PATH included.
//
// Every other variable an isolated task sees is one Drover builds
// (NOMAD_*, the job's env block, templates with env = true).

// DefaultDenylist are agent environment variables never passed to tasks:
// Nomad's default env.denylist plus the tokens of Nomad's and Drover's
// own CLIs. An operator's env.denylist is added to it, never replaces it.
var DefaultDenylist = []string{
	"CONSUL_TOKEN", "CONSUL_HTTP_TOKEN", "VAULT_TOKEN", "NOMAD_LICENSE",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"GOOGLE_APPLICATION_CREDENTIALS",
	"NOMAD_TOKEN", "DROVER_TOKEN",
}

// DefaultPath is the PATH of an isolated task when the agent has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// IsolatedVars are the agent's variables an isolated task inherits: how
// to find programs and how to speak (locale, time zone). Each says
// something about the host, none grants anything. LC_* is every locale
// category.
var IsolatedVars = []string{"PATH", "LANG", "LANGUAGE", "LC_*", "TZ"}

// HostEnv returns the agent's environment without DefaultDenylist and
// deny (the client's env.denylist).
func HostEnv(deny []string) map[string]string {
	denied := map[string]bool{}
	for _, d := range append(append([]string(nil), DefaultDenylist...), deny...) {
		denied[d] = true
	}
	out := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if ok && !denied[k] {
			out[k] = v
		}
	}
	return out
}

// IsolatedBase returns the part of host (the agent's environment, as
// HostEnv returned it) that an isolated task inherits: IsolatedVars, and
// DefaultPath when host has no PATH.
func IsolatedBase(host map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range host {
		if isolatedVar(k) {
			out[k] = v
		}
	}
	if out["PATH"] == "" {
		out["PATH"] = DefaultPath
	}
	return out
}

func isolatedVar(k string) bool {
	for _, v := range IsolatedVars {
		if prefix, ok := strings.CutSuffix(v, "*"); ok && strings.HasPrefix(k, prefix) || k == v {
			return true
		}
	}
	return false
}

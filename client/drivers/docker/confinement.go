package docker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A task's config may ask the daemon for less confinement than Docker's
// defaults. What hands the container the host (or a way out to it) is
// refused unless the operator allows privileged containers: the keys
// below are each as good as privileged = true for a job submitter who
// wants the node.

// checkSecurityOpt refuses security_opt values that turn confinement off:
// seccomp unconfined or a custom profile (which may allow every call),
// AppArmor unconfined, SELinux labelling disabled or the super-privileged
// type, and /proc and /sys unmasked (systempaths). Docker takes both
// "key=value" and the older "key:value".
func checkSecurityOpt(tc *TaskConfig, pc PluginConfig) error {
	if pc.AllowPrivileged {
		return nil
	}
	for _, opt := range tc.SecurityOpt {
		key, value := splitSecurityOpt(opt)
		var why string
		switch key {
		case "seccomp":
			if value != "builtin" {
				why = "it replaces the seccomp filter"
			}
		case "apparmor":
			if value == "unconfined" {
				why = "it turns AppArmor off"
			}
		case "label":
			if value == "disable" || strings.Contains(value, "spc_t") {
				why = "it turns SELinux confinement off"
			}
		case "systempaths":
			if value == "unconfined" {
				why = "it unmasks /proc and /sys"
			}
		}
		if why != "" {
			return fmt.Errorf("docker config: security_opt %q is not allowed on this client: %s, which needs allow_privileged = true in the plugin \"docker\" config (no-new-privileges and other options that only confine more are allowed)", opt, why)
		}
	}
	return nil
}

// splitSecurityOpt returns an option's key and value, lower-cased: they
// are compared as keywords.
func splitSecurityOpt(opt string) (key, value string) {
	i := strings.IndexAny(opt, "=:")
	if i < 0 {
		return strings.ToLower(strings.TrimSpace(opt)), ""
	}
	return strings.ToLower(strings.TrimSpace(opt[:i])), strings.ToLower(strings.TrimSpace(opt[i+1:]))
}

// checkHostNamespaces refuses pid_mode, ipc_mode, uts_mode and
// userns_mode "host": the host's processes (to signal and ptrace), its
// shared memory, its hostname, and no user remapping.
func checkHostNamespaces(tc *TaskConfig, pc PluginConfig) error {
	if pc.AllowPrivileged {
		return nil
	}
	for _, m := range []struct{ key, value string }{
		{"pid_mode", tc.PidMode}, {"ipc_mode", tc.IPCMode}, {"uts_mode", tc.UTSMode}, {"userns_mode", tc.UsernsMode},
	} {
		if strings.EqualFold(strings.TrimSpace(m.value), "host") {
			return fmt.Errorf("docker config: %s \"host\" is not allowed on this client: it puts the task in the host's namespace, which needs allow_privileged = true in the plugin \"docker\" config (leave it unset for the task's own)", m.key)
		}
	}
	return nil
}

// namespacedSysctls are the sysctls the kernel keeps per IPC namespace;
// fs.mqueue.* are too, and net.* are per network namespace.
var namespacedSysctls = map[string]bool{
	"kernel.msgmax": true, "kernel.msgmnb": true, "kernel.msgmni": true, "kernel.sem": true,
	"kernel.shmall": true, "kernel.shmmax": true, "kernel.shmmni": true, "kernel.shm_rmid_forced": true,
}

// checkSysctl refuses sysctls that are not the container's own: a
// host-wide one would change the node for every task (the runtime refuses
// those too, but only once a container exists, and in its own words), and
// net.* when the task runs in the host's network.
func checkSysctl(tc *TaskConfig) error {
	for _, k := range slices.Sorted(maps.Keys(tc.Sysctl)) {
		switch {
		case strings.HasPrefix(k, "net."):
			if tc.NetworkMode == "host" {
				return fmt.Errorf("docker config: sysctl %q is not allowed with network_mode \"host\": it would change the host's network", k)
			}
		case namespacedSysctls[k], strings.HasPrefix(k, "fs.mqueue."):
		default:
			return fmt.Errorf("docker config: sysctl %q is not allowed: it is not kept per container and would change the node (a task may set net.*, fs.mqueue.*, kernel.msg*, kernel.sem, kernel.shm*)", k)
		}
	}
	return nil
}

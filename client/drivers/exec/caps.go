package exec

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultAllowCaps is Nomad's default allow_caps for exec: what a root
// task holds unless cap_drop removes some, and the most cap_add may add.
var DefaultAllowCaps = []string{
	"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
	"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
}

// rootOnlyCaps are in DefaultAllowCaps for root tasks, but a non-root
// task may not cap_add them unless the client's allow_caps is set (and
// names them): with mknod it could make device nodes, with setuid or
// setgid become uid or gid 0 and own what root owns in its view.
var rootOnlyCaps = []string{"mknod", "setgid", "setuid"}

func withoutCaps(list, remove []string) []string {
	out := make([]string, 0, len(list))
	for _, c := range list {
		if c == "all" {
			for n := range capNumbers {
				if !slices.Contains(remove, n) {
					out = append(out, n)
				}
			}
			continue
		}
		if !slices.Contains(remove, c) {
			out = append(out, c)
		}
	}
	return out
}

// capNumbers are the capabilities by the names jobspecs use (lower case,
// without "CAP_"; "cap_net_raw" and "NET_RAW" are accepted too).
var capNumbers = map[string]uint{
	"chown": unix.CAP_CHOWN, "dac_override": unix.CAP_DAC_OVERRIDE, "dac_read_search": unix.CAP_DAC_READ_SEARCH,
	"fowner": unix.CAP_FOWNER, "fsetid": unix.CAP_FSETID, "kill": unix.CAP_KILL, "setgid": unix.CAP_SETGID,
	"setuid": unix.CAP_SETUID, "setpcap": unix.CAP_SETPCAP, "linux_immutable": unix.CAP_LINUX_IMMUTABLE,
	"net_bind_service": unix.CAP_NET_BIND_SERVICE, "net_broadcast": unix.CAP_NET_BROADCAST,
	"net_admin": unix.CAP_NET_ADMIN, "net_raw": unix.CAP_NET_RAW, "ipc_lock": unix.CAP_IPC_LOCK,
	"ipc_owner": unix.CAP_IPC_OWNER, "sys_module": unix.CAP_SYS_MODULE, "sys_rawio": unix.CAP_SYS_RAWIO,
	"sys_chroot": unix.CAP_SYS_CHROOT, "sys_ptrace": unix.CAP_SYS_PTRACE, "sys_pacct": unix.CAP_SYS_PACCT,
	"sys_admin": unix.CAP_SYS_ADMIN, "sys_boot": unix.CAP_SYS_BOOT, "sys_nice": unix.CAP_SYS_NICE,
	"sys_resource": unix.CAP_SYS_RESOURCE, "sys_time": unix.CAP_SYS_TIME, "sys_tty_config": unix.CAP_SYS_TTY_CONFIG,
	"mknod": unix.CAP_MKNOD, "lease": unix.CAP_LEASE, "audit_write": unix.CAP_AUDIT_WRITE,
	"audit_control": unix.CAP_AUDIT_CONTROL, "setfcap": unix.CAP_SETFCAP, "mac_override": unix.CAP_MAC_OVERRIDE,
	"mac_admin": unix.CAP_MAC_ADMIN, "syslog": unix.CAP_SYSLOG, "wake_alarm": unix.CAP_WAKE_ALARM,
	"block_suspend": unix.CAP_BLOCK_SUSPEND, "audit_read": unix.CAP_AUDIT_READ, "perfmon": unix.CAP_PERFMON,
	"bpf": unix.CAP_BPF, "checkpoint_restore": unix.CAP_CHECKPOINT_RESTORE,
}

func capName(s string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "cap_")
}

// parseCapList checks a list of capability names ("all" allowed where
// all is true) and returns them normalised.
func parseCapList(field string, names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		c := capName(n)
		if c == "all" {
			out = append(out, c)
			continue
		}
		if _, ok := capNumbers[c]; !ok {
			return nil, fmt.Errorf("%s: %q is not a Linux capability (for example %q)", field, n, "net_bind_service")
		}
		out = append(out, c)
	}
	return out, nil
}

// taskCaps computes the capabilities a task holds: for root, allow_caps'
// default set less cap_drop plus cap_add; for anyone else, cap_add only.
// Anything cap_add names must be in allow; a refused request names what
// is allowed.
func taskCaps(allow, add, drop []string, root bool) ([]uint, error) {
	allowed := map[string]bool{}
	for _, a := range allow {
		if a == "all" {
			for n := range capNumbers {
				allowed[n] = true
			}
			continue
		}
		allowed[a] = true
	}
	have := map[string]bool{}
	if root {
		for a := range allowed {
			have[a] = true
		}
	}
	for _, d := range drop {
		if d == "all" {
			have = map[string]bool{}
			continue
		}
		delete(have, d)
	}
	var refused []string
	for _, a := range add {
		if a == "all" {
			for n := range allowed {
				have[n] = true
			}
			continue
		}
		if !allowed[a] {
			refused = append(refused, a)
			continue
		}
		have[a] = true
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("config \"cap_add\": %s not allowed on this client; the exec plugin's allow_caps permits %s",
			strings.Join(refused, ", "), strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
	}
	out := make([]uint, 0, len(have))
	for n := range have {
		out = append(out, capNumbers[n])
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/exec/execinit"
)

// DefaultChrootEnv is Nomad's default chroot_env: host path to path in
// the task's root. Host paths that do not exist are skipped.
var DefaultChrootEnv = map[string]string{
	"/bin":            "/bin",
	"/etc":            "/etc",
	"/lib":            "/lib",
	"/lib32":          "/lib32",
	"/lib64":          "/lib64",
	"/run/resolvconf": "/run/resolvconf",
	"/sbin":           "/sbin",
	"/usr":            "/usr",
}

// EtcCopy is what of an /etc directory a task gets: copies, never the
// directory itself, so shadow, gshadow, sudoers and the agent's own
// configuration stay out of reach. A chroot_env entry that maps a whole
// /etc (its target is /etc) gets the same treatment.
//
// Of ssl/ only the public parts: ssl/private holds the host's keys.
var EtcCopy = []string{
	"passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"resolv.conf", "hosts", "host.conf", "gai.conf", "localtime", "timezone", "ssl/certs",
	"ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki/tls/certs",
	"pki/ca-trust", "alternatives", "services",
	"protocols", "mime.types", "os-release", "environment", "profile", "shells",
	"inputrc", "login.defs", "debian_version", "lsb-release",
}

// checkChrootEnv refuses a chroot_env that would expose the host.
func checkChrootEnv(env map[string]string) error {
	for src, dst := range env {
		if !filepath.IsAbs(src) || !filepath.IsAbs(dst) {
			return fmt.Errorf("client chroot_env: %q = %q: both paths must be absolute", src, dst)
		}
		if filepath.Clean(src) == "/" || filepath.Clean(dst) == "/" {
			return fmt.Errorf("client chroot_env: %q = %q: / cannot be mapped (it would expose /etc/shadow and the agent's data dir); map the directories tasks need, such as /usr", src, dst)
		}
		for _, reserved := range []string{drivers.TaskAllocDir, drivers.TaskLocalDir, drivers.TaskSecretsDir, drivers.TaskTmpDir, "/proc", "/dev"} {
			if d := filepath.Clean(dst); d == reserved || strings.HasPrefix(d, reserved+"/") {
				return fmt.Errorf("client chroot_env: %q = %q: %s is the task's own; choose another target", src, dst, reserved)
			}
		}
	}
	return nil
}

// chrootMounts turns chroot_env into the init's mounts, parents first,
// plus the alloc dir at /alloc and the task's host volumes.
func chrootMounts(env map[string]string, cfg *drivers.TaskConfig) []execinit.Mount {
	var out []execinit.Mount
	for src, dst := range env {
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if filepath.Clean(dst) == "/etc" {
			out = append(out, execinit.Mount{Kind: execinit.MountEtc, Source: src, Target: "/etc", Copy: EtcCopy})
			continue
		}
		out = append(out, execinit.Mount{Kind: execinit.MountBind, Source: src, Target: filepath.Clean(dst), ReadOnly: true})
	}
	if cfg.ResolvConfPath != "" {
		// The alloc's dns block, over the copy of the host's.
		out = append(out, execinit.Mount{Kind: execinit.MountBind, Source: cfg.ResolvConfPath, Target: "/etc/resolv.conf", ReadOnly: true})
	}
	if shared := sharedDir(cfg); shared != "" {
		out = append(out, execinit.Mount{Kind: execinit.MountBind, Source: shared, Target: drivers.TaskAllocDir})
	}
	out = append(out, volumeBinds(cfg)...)
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := strings.Count(out[i].Target, "/"), strings.Count(out[j].Target, "/")
		if di != dj {
			return di < dj
		}
		return out[i].Target < out[j].Target
	})
	return out
}

// etcSource is the host directory the task's /etc is copied from.
func etcSource(env map[string]string) string {
	for src, dst := range env {
		if filepath.Clean(dst) == "/etc" {
			return src
		}
	}
	return ""
}

// sharedDir is the host path of the alloc's shared alloc/ directory.
func sharedDir(cfg *drivers.TaskConfig) string {
	if cfg.AllocDir == "" {
		return ""
	}
	d := filepath.Join(cfg.AllocDir, "alloc")
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return ""
	}
	return d
}

// inTask maps a host path under the task's or the alloc's directory to
// where the task sees it. The task runner names directories by their
// host paths (NOMAD_TASK_DIR, and every ${NOMAD_TASK_DIR} a job file
// interpolates into args); inside the chroot those paths do not exist.
// Values that name nothing of the task are returned unchanged.
func inTask(cfg *drivers.TaskConfig, v string) string {
	if shared := filepath.Join(cfg.AllocDir, "alloc"); cfg.AllocDir != "" {
		if rel, ok := under(shared, v); ok {
			return filepath.Join(drivers.TaskAllocDir, rel)
		}
	}
	if cfg.TaskDir != "" {
		if rel, ok := under(cfg.TaskDir, v); ok {
			return filepath.Join("/", rel)
		}
	}
	return v
}

// under reports whether v is dir or below it, and the rest of the path.
func under(dir, v string) (string, bool) {
	dir = filepath.Clean(dir)
	if v == dir {
		return "", true
	}
	if rest, ok := strings.CutPrefix(v, dir+"/"); ok {
		return rest, true
	}
	return "", false
}

// taskEnv is the task's environment as the task sees it: directory
// variables rewritten for the chroot, and a PATH when it has none.
func taskEnv(cfg *drivers.TaskConfig) []string {
	out := make([]string, 0, len(cfg.Env)+1)
	hasPath := false
	for k, v := range cfg.Env {
		if k == "PATH" {
			hasPath = true
		}
		out = append(out, k+"="+inTask(cfg, v))
	}
	if !hasPath {
		out = append(out, "PATH="+defaultPath)
	}
	sort.Strings(out)
	return out
}

// defaultPath is the PATH of a task whose environment names none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

var errNoEtc = errors.New("the client's chroot_env maps no /etc, so no user can be resolved")

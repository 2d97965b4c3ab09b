package fingerprint

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/taskuser"
)

// agentFingerprinter describes the agent itself: its version and region,
// and the users it refuses to run tasks as (user.denylist and
// user.checked_drivers), so the scheduler places no task there that the
// client would refuse.
type agentFingerprinter struct{}

func (agentFingerprinter) Fingerprint(cfg *config.Config, node *Target) error {
	node.Attributes["nomad.version"] = cfg.Version
	node.Attributes["nomad.region"] = cfg.Region
	for k, v := range taskuser.ParsePolicy(cfg.Options).Attributes() {
		node.Attributes[k] = v
	}
	return nil
}

// hostFingerprinter describes the host: its name, operating system
// (etcRoot/os-release) and kernel (uname).
type hostFingerprinter struct {
	etcRoot  string
	hostname func() (string, error)
	uname    func() (unix.Utsname, error)
}

func (f hostFingerprinter) Fingerprint(_ *config.Config, node *Target) error {
	attrs := node.Attributes
	attrs["unique.hostname"], _ = f.hostname()
	attrs["os.name"], attrs["os.version"] = f.osRelease()
	attrs["kernel.name"], attrs["kernel.version"], attrs["kernel.arch"] = f.kernel()
	attrs["cpu.arch"] = runtime.GOARCH
	return nil
}

// osRelease reads ID and VERSION_ID from os-release.
func (f hostFingerprinter) osRelease() (name, version string) {
	file, err := os.Open(filepath.Join(f.etcRoot, "os-release"))
	if err != nil {
		return runtime.GOOS, ""
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			name = v
		case "VERSION_ID":
			version = v
		}
	}
	if name == "" {
		name = runtime.GOOS
	}
	return name, version
}

// kernel returns the kernel name ("linux"), release and machine.
func (f hostFingerprinter) kernel() (name, version, arch string) {
	u, err := f.uname()
	if err != nil {
		return runtime.GOOS, "", runtime.GOARCH
	}
	return strings.ToLower(unix.ByteSliceToString(u.Sysname[:])), unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:])
}

// uname is this host's uname(2).
func uname() (unix.Utsname, error) {
	var u unix.Utsname
	err := unix.Uname(&u)
	return u, err
}

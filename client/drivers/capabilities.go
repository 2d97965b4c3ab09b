package drivers

// FSIsolation is what a driver's tasks see of the file system. It decides
// the paths the task's environment names (NOMAD_ALLOC_DIR and friends, and
// so every ${NOMAD_TASK_DIR} a job file interpolates): a task that runs in
// a chroot or an image sees its directories where they are mounted, not
// where they are on the host.
type FSIsolation string

const (
	// FSIsolationNone: the task sees the host's file system (raw_exec), so
	// its directories are named by their host paths.
	FSIsolationNone FSIsolation = "none"
	// FSIsolationChroot: the task's directory is its root (exec), with the
	// alloc dir at /alloc and its own local/, secrets/ and tmp/ at /local,
	// /secrets and /tmp.
	FSIsolationChroot FSIsolation = "chroot"
	// FSIsolationImage: the task's root is an image (docker), with the same
	// directories mounted at the same paths as in a chroot.
	FSIsolationImage FSIsolation = "image"
)

// In-task paths of the task's directories under chroot or image isolation,
// as Nomad names them.
const (
	TaskAllocDir   = "/alloc"
	TaskLocalDir   = "/local"
	TaskSecretsDir = "/secrets"
	TaskTmpDir     = "/tmp"
)

// Capabilities are what the task runner needs to know about a driver
// beyond the Driver interface.
type Capabilities struct {
	// FSIsolation is what the driver's tasks see of the file system.
	FSIsolation FSIsolation
	// HostEnv says the task starts from the agent's own environment (less
	// the client's env.denylist), as raw_exec tasks do in Nomad. Tasks of
	// drivers without it get only the variables the task runner builds.
	HostEnv bool
	// UserEtc is the host directory whose passwd and group files the
	// driver resolves task users against (the one a task's /etc is copied
	// from); "" resolves them through the host's NSS.
	UserEtc string
}

// CapabilitiesDriver is implemented by drivers that declare Capabilities.
type CapabilitiesDriver interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns d's capabilities. A driver that declares none is
// treated as raw_exec is: host paths and the agent's environment, which is
// what every driver got before drivers declared capabilities.
func CapabilitiesOf(d Driver) Capabilities {
	if c, ok := d.(CapabilitiesDriver); ok {
		return c.Capabilities()
	}
	return Capabilities{FSIsolation: FSIsolationNone, HostEnv: true}
}

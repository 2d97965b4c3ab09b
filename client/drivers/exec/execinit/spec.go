package execinit

import "os"

// EnvMarker is set (to "1") in the environment of a process the exec
// driver starts as a task's init. MaybeRun looks for it; the task itself
// never sees it, since the task's environment travels in the Spec.
const EnvMarker = "DROVER_EXEC_INIT"

// The init's inherited descriptors. Any further descriptors (the log
// FIFOs' read ends, see the executor's doc) are passed on to the task,
// renumbered from 3.
const (
	// SpecFD carries the Spec as JSON. The driver writes it only after it
	// has placed the init in every cgroup, so the init's blocking read is
	// also the "you are confined now" signal.
	SpecFD = 3
	// StatusFD carries Status lines (JSON) back to the driver.
	StatusFD = 4
	// firstPassFD is the first descriptor passed on to the task.
	firstPassFD = 5
)

// MountKind says what a Mount makes.
type MountKind string

// Mount kinds.
const (
	// MountBind bind-mounts Source (a host path) at Target.
	MountBind MountKind = "bind"
	// MountEtc makes Target a tmpfs holding copies of the Copy entries of
	// Source (an /etc directory): never the whole directory.
	MountEtc MountKind = "etc"
)

// Mount is one entry of the task's root, made inside the init's private
// mount namespace, so it vanishes with the namespace.
type Mount struct {
	Kind MountKind
	// Source is a host path.
	Source string
	// Target is the path inside the task's root.
	Target   string
	ReadOnly bool
	// Copy lists the names, relative to Source, that a MountEtc copies.
	Copy []string
}

// Spec is everything the init needs to build the task's world and start
// the task in it.
type Spec struct {
	// Root is the host path of the task's directory, which becomes "/".
	Root   string
	Mounts []Mount
	// NetNS is the path of the alloc's network namespace (bridge, none
	// and cni/* modes), which the init joins before it forks the task;
	// empty leaves the task in the host's network.
	NetNS string `json:",omitempty"`
	// Hostname is set in the task's UTS namespace and written to
	// /etc/hostname.
	Hostname string
	// Uid, Gid and Groups are the task's credentials.
	Uid, Gid uint32
	Groups   []uint32
	// Caps are the capabilities the task holds (numbers as in
	// linux/capability.h). For a non-root task they are ambient; for
	// root they are the bounding set and so what root gets at exec.
	Caps []uint
	// NoNewPrivs sets PR_SET_NO_NEW_PRIVS before the task's exec.
	NoNewPrivs bool
	// Env is the task's complete environment ("K=V").
	Env []string
	// Cwd is the working directory inside the root.
	Cwd string
	// Command is resolved inside the root: absolute as is, with a slash
	// relative to Cwd, else on the PATH of Env.
	Command string
	Args    []string
	// Pass is how many descriptors, from firstPassFD on, the driver
	// passed for the task (the log FIFO holders). The init cannot tell
	// them from any a careless ancestor of the agent left inheritable,
	// so it is told; everything else it holds stays with it.
	Pass int

	// passFDs are the descriptors the init passes on to the task.
	passFDs []uintptr
	// oomScoreAdj is the init's own oom_score_adj (oom.go).
	oomScoreAdj *os.File
}

// Status is one line the init writes on StatusFD.
type Status struct {
	// Error is set when the init failed before the task started; the
	// driver returns it from StartTask.
	Error string `json:",omitempty"`
	// Pid is the task's pid inside the namespace (normally 2), once it
	// has exec'd.
	Pid int `json:",omitempty"`
	// Exited is set on the last line, when the task's main process ended.
	Exited   bool `json:",omitempty"`
	ExitCode int  `json:",omitempty"`
	Signal   int  `json:",omitempty"`
}

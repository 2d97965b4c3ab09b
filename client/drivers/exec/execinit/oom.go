package execinit

import (
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// The init is the task's pid 1, and when pid 1 of a pid namespace dies
// the kernel kills every process in it. At the task's memory limit the
// OOM killer picks the process with the largest resident set, counting
// file pages, and the init's (the drover binary: about 20 MB, mostly its
// text) is larger than that of most of a task's processes. Left as it
// is, a task that outgrows its limit would often lose its whole process
// tree at once, where the killer should take the process that grew.
//
// So the init makes itself exempt (oom_score_adj -1000) right after it
// forks the task. Before the fork would not do: the task would inherit
// the exemption, and with it the right to lower itself back to it (the
// kernel keeps the floor a privileged write set, oom_score_adj_min,
// across fork). The task forks with the agent's score and floor; the
// fork is a vfork, so the window in which the init is still a candidate
// is the few microseconds between the task's exec and this write.
//
// Lowering a score needs CAP_SYS_RESOURCE, which an agent in a container
// may not hold; its tasks' inits then stay candidates, made as light as
// they can be (shrink.go).

// oomExempt is the value that takes a process out of the OOM killer's
// choice.
const oomExempt = "-1000"

// openOOMScoreAdj opens the init's own oom_score_adj while the host's
// /proc is still where it was, before the root is built; nil if the init
// could not lower it or the file cannot be opened (the task starts all the
// same, see exemptFromOOM).
func openOOMScoreAdj() *os.File {
	if !hasPermitted(unix.CAP_SYS_RESOURCE) {
		return nil
	}
	f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	return f
}

// exemptFromOOM writes the exemption. Lowering the score needs
// CAP_SYS_RESOURCE on the calling thread, which the forking thread holds
// until shedAfterTask drops it. It is a refinement, not a condition of the
// task's start: a write the kernel refuses leaves the task running, with
// an init as light as shrink makes it.
func exemptFromOOM(f *os.File) {
	if f == nil {
		return
	}
	_, _ = f.WriteString(oomExempt)
	_ = f.Close()
}

// hasPermitted reports whether this thread's permitted set holds c.
func hasPermitted(c uint) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Permitted&(1<<(c%32)) != 0
}

// forkCaps are the capabilities the forking thread holds for the fork
// besides the task's own: CAP_SYS_RESOURCE for exemptFromOOM after it.
// Not inheritable, they do not survive the task's exec.
func forkCaps(s *Spec, caps ...uint) []uint {
	out := slices.Clone(caps)
	if s.oomScoreAdj != nil {
		out = append(out, unix.CAP_SYS_RESOURCE)
	}
	return out
}

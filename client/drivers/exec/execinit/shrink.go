package execinit

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// shrink gives back what the init touched to set the task up and will
// not touch again: its free heap, and the pages of its own executable it
// read (most of its resident set: the drover binary's text, ~18 MB of a
// ~22 MB total). The OOM killer weighs a process by its resident set,
// file pages included, and a task's pid 1 must not be the heaviest
// process in its cgroup (oom.go); it also makes the task's memory figures
// its own.
//
// Only read-only mappings of the executable that hold no private copy of
// a page, in memory or swapped out (smaps' Anonymous and Swap are 0), are
// dropped: their pages come back from
// the page cache, unchanged, when the init touches them again. A mapping
// made read-only after relocation (a PIE's RELRO) holds private copies and
// is kept, as is everything writable.
func shrink() {
	debug.FreeOSMemory()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range droppableMappings(smaps, exe) {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED)
	}
}

type mapping struct{ start, end uintptr }

// droppableMappings reads smaps for the read-only, unmodified mappings of
// the file at path.
func droppableMappings(smaps []byte, path string) []mapping {
	var out []mapping
	var cur *mapping
	keep := false
	flush := func() {
		if cur != nil && keep {
			out = append(out, *cur)
		}
		cur, keep = nil, false
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") {
			// A mapping's header: range perms offset dev inode [path].
			flush()
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || len(f) < 6 {
				continue
			}
			cur = &mapping{uintptr(start), uintptr(end)}
			keep = f[5] == path && len(f[1]) == 4 && f[1][1] == '-'
			continue
		}
		// A private copy in memory counts as Anonymous; one swapped out
		// as Swap. Either is a page the file no longer holds.
		if (f[0] == "Anonymous:" || f[0] == "Swap:") && (len(f) < 2 || f[1] != "0") {
			keep = false
		}
	}
	flush()
	return out
}

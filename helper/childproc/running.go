package childproc

import (
	"os"
	"strconv"
	"strings"
)

// argv0Prefix starts a child's argv[0], before the entry's name.
const argv0Prefix = "drover-child "

// Running counts the live children of the process parent that run the
// entry named entry, as /proc shows them (zombies not counted). Tests and
// diagnostics use it to see that a child was started, or is gone; it reads
// /proc, so it answers 0 where there is none.
func Running(parent int, entry string) int {
	dirs, _ := os.ReadDir("/proc")
	want := argv0Prefix + entry
	ppid := strconv.Itoa(parent)
	n := 0
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the fields after the last ')', as
		// comm may hold spaces and parentheses.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[1] != ppid || fields[0] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 == want {
			n++
		}
	}
	return n
}

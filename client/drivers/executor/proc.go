package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRoot is where /proc is mounted. Tests exercise the parser
// (parseProcStat) on text, so nothing needs to point this elsewhere.
const procRoot = "/proc"

// clockTicks is USER_HZ, the unit of utime, stime and starttime. It is 100
// on every Linux architecture Drover runs on.
const clockTicks = 100

// procStat is the part of /proc/<pid>/stat the executor needs.
type procStat struct {
	State      byte
	Pgrp       int
	UTime      uint64
	STime      uint64
	StartTicks uint64
	RSSPages   uint64
}

// readProcStat parses /proc/<pid>/stat. The command name is in parentheses
// and may itself contain spaces and parentheses, so fields are counted from
// the last ')'.
func readProcStat(pid int) (*procStat, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	return parseProcStat(string(b))
}

func parseProcStat(s string) (*procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed stat line")
	}
	f := strings.Fields(s[i+1:])
	// After ')': 0 state, 1 ppid, 2 pgrp, ... 11 utime, 12 stime, 19 starttime, 21 rss.
	if len(f) < 22 {
		return nil, fmt.Errorf("stat line has %d fields after the command, want >= 22", len(f))
	}
	num := func(i int) uint64 { n, _ := strconv.ParseUint(f[i], 10, 64); return n }
	pgrp, _ := strconv.Atoi(f[2])
	return &procStat{
		State: f[0][0], Pgrp: pgrp, UTime: num(11), STime: num(12),
		StartTicks: num(19), RSSPages: num(21),
	}, nil
}

// alive reports whether pid is still the process that started at
// startTicks and has not exited (a zombie has exited).
func alive(pid int, startTicks uint64) bool {
	st, err := readProcStat(pid)
	if err != nil {
		return false
	}
	return st.StartTicks == startTicks && st.State != 'Z' && st.State != 'X'
}

// groupMembers returns the stats of every live process in process group
// pgrp, for resource usage sampling.
func groupMembers(pgrp int) []*procStat {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var out []*procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil || st.Pgrp != pgrp || st.State == 'Z' {
			continue
		}
		out = append(out, st)
	}
	return out
}

// pidInUse reports whether a process (or zombie) holds pid.
func pidInUse(pid int) bool {
	_, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid)))
	return err == nil
}

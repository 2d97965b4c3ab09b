package command

import (
	"fmt"
	"io"

	"github.com/drover-sched/drover/api"
)

const allocFSHelp = `
Usage: drover alloc fs [options] <allocation> [path]

  List a directory of an allocation's directory, or print a file. Paths
  are relative to the allocation's directory: "/" (the default) is the
  directory itself, alloc/logs holds the task logs, <task>/local is a
  task's own directory. Nothing outside the allocation's directory can be
  reached, nor a task's secrets directory (<task>/secrets).

FS Options:

  -stat      Describe the file or directory instead of listing or
             printing it.
  -H         Print sizes in KiB, MiB, ... instead of bytes.
  -verbose   Show full IDs.
`

func allocFS(m *Meta, args []string) int {
	c := m.cmdLine("alloc fs", allocFSHelp, takesUpTo(1, 2, "<allocation> [path]")).withVerbose()
	stat := c.Bool("stat", false, "")
	human := c.Bool("H", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	path := "/"
	if c.NArg() == 2 {
		path = c.Arg(1)
	}
	client, allocID, code, ok := c.clientFor(allocKind)
	if !ok {
		return code
	}
	info, _, err := client.AllocFS().Stat(allocID, path, nil)
	if err != nil {
		return m.errorf("Error reading %q: %v", path, err)
	}
	if *stat {
		fmt.Fprint(m.stdout, fileTable([]*api.AllocFileInfo{info}, *human))
		return 0
	}
	if info.IsDir {
		files, _, err := client.AllocFS().List(allocID, path, nil)
		if err != nil {
			return m.errorf("Error listing %q: %v", path, err)
		}
		fmt.Fprint(m.stdout, fileTable(files, *human))
		return 0
	}
	return m.withInterrupt(func() int {
		r, err := client.AllocFS().Cat(allocID, path, (&api.QueryOptions{}).WithContext(m.ctx))
		if err != nil {
			return m.errorf("Error reading %q: %v", path, err)
		}
		defer r.Close()
		if _, err := io.Copy(m.stdout, r); err != nil && m.ctx.Err() == nil {
			return m.errorf("Error reading %q: %v", path, err)
		}
		return 0
	})
}

// fileTable lays out files as ls -l does, directories with a trailing
// slash.
func fileTable(files []*api.AllocFileInfo, human bool) string {
	rows := []string{"Mode|Size|Modified Time|Name"}
	for _, f := range files {
		size := fmt.Sprint(f.Size)
		if human {
			size = formatBytes(uint64(max(f.Size, 0)))
		}
		name := f.Name
		if f.IsDir {
			name += "/"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s", f.FileMode, size, formatTime(f.ModTime), name))
	}
	return columns(rows)
}

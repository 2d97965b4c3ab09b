package command

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drover-sched/drover/api"
)

const allocLogsHelp = `
Usage: drover alloc logs [options] <allocation> [task]

  Print a task's stdout (or stderr) log. The task may be left out when the
  allocation has only one.

Logs Options:

  -stderr      Show stderr instead of stdout.
  -f           Follow the log: keep printing as the task writes.
  -tail        Start from the end of the log. Without -n or -c, shows the
               last 10 lines.
  -n=<lines>   With -tail, how many lines to show.
  -c=<bytes>   With -tail, how many bytes to show.
  -verbose     Show full IDs in messages.
`

// Tail settings. The agent's API offsets are in bytes, so a line count is
// turned into a byte window big enough for that many typical lines, and
// the output is then cut to the exact number of lines.
const (
	defaultTailLines = 10
	tailBytesPerLine = 256

	// tailIdle is how long a followed stream may be quiet before the
	// backlog is taken to be fully read and its last lines are printed.
	tailIdle = 250 * time.Millisecond
)

func allocLogs(m *Meta, args []string) int {
	c := m.cmdLine("alloc logs", allocLogsHelp, takesUpTo(1, 2, "<allocation> [task]")).withVerbose()
	stderr := c.Bool("stderr", false, "")
	follow := c.Bool("f", false, "")
	tail := c.Bool("tail", false, "")
	lines := c.Int("n", -1, "")
	numBytes := c.Int64("c", -1, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if (*lines >= 0 || *numBytes >= 0) && !*tail {
		return c.usageError("-n and -c apply only with -tail")
	}
	if *lines >= 0 && *numBytes >= 0 {
		return c.usageError("Only one of -n and -c may be given")
	}
	client, allocID, code, ok := c.clientFor(allocKind)
	if !ok {
		return code
	}
	alloc, _, err := client.Allocations().Info(allocID, nil)
	if err != nil {
		return m.errorf("Error querying allocation: %v", err)
	}
	task, err := pickTask(alloc, c.Arg(1))
	if err != nil {
		return m.errorf("%v", err)
	}

	opts := api.LogsOptions{Task: task, Type: "stdout", Follow: *follow}
	if *stderr {
		opts.Type = "stderr"
	}
	keepLines := -1
	if *tail {
		opts.Origin = api.OriginEnd
		switch {
		case *numBytes >= 0:
			opts.Offset = *numBytes
		default:
			keepLines = *lines
			if keepLines < 0 {
				keepLines = defaultTailLines
			}
			opts.Offset = int64(keepLines+1) * tailBytesPerLine
		}
	}
	return m.withInterrupt(func() int {
		rc, err := client.Allocations().Logs(m.ctx, allocID, opts, nil)
		if err != nil {
			return m.errorf("Error reading %s of task %q: %v", opts.Type, task, err)
		}
		defer rc.Close()
		if keepLines >= 0 {
			err = copyLastLines(m.stdout, rc, keepLines, opts.Offset, *follow)
		} else {
			_, err = io.Copy(m.stdout, rc)
		}
		if err != nil && m.ctx.Err() == nil {
			return m.errorf("Error reading logs: %v", err)
		}
		return 0
	})
}

// pickTask returns the task to show: the one named, or the only one.
func pickTask(a *api.Allocation, name string) (string, error) {
	tasks := taskNames(a)
	if name != "" {
		for _, t := range tasks {
			if t == name {
				return name, nil
			}
		}
		return "", fmt.Errorf("allocation %q has no task %q; its tasks are: %s", shortID(a.ID, false), name, strings.Join(tasks, ", "))
	}
	switch len(tasks) {
	case 0:
		return "", fmt.Errorf("allocation %q has no tasks", shortID(a.ID, false))
	case 1:
		return tasks[0], nil
	}
	return "", fmt.Errorf("allocation %q runs several tasks (%s); name one", shortID(a.ID, false), strings.Join(tasks, ", "))
}

// copyLastLines writes the last n lines of the backlog read from r, then,
// when following, everything after it. The backlog is at most window bytes
// (the offset asked for); when following, a backlog shorter than that is
// recognised by the stream going quiet for tailIdle.
func copyLastLines(w io.Writer, r io.Reader, n int, window int64, follow bool) error {
	if !follow {
		buf, err := io.ReadAll(r)
		if _, werr := w.Write(lastLines(buf, n)); werr != nil {
			return werr
		}
		return err
	}

	// One goroutine reads, so the loop below can wait for data and for
	// quiet at once. It ends when r fails, which closing the stream (the
	// caller's deferred Close) ensures; done keeps it from blocking on a
	// send after this function has returned.
	type chunk struct {
		data []byte
		err  error
	}
	chunks := make(chan chunk)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			buf := make([]byte, 32<<10)
			k, err := r.Read(buf)
			select {
			case chunks <- chunk{buf[:k], err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()

	var backlog []byte
	flushed := false
	flush := func() error {
		flushed = true
		_, err := w.Write(lastLines(backlog, n))
		backlog = nil
		return err
	}
	idle := time.NewTimer(tailIdle)
	defer idle.Stop()
	for {
		select {
		case c := <-chunks:
			if flushed {
				if _, err := w.Write(c.data); err != nil {
					return err
				}
			} else {
				backlog = append(backlog, c.data...)
				if int64(len(backlog)) >= window {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if c.err != nil {
				if !flushed {
					if err := flush(); err != nil {
						return err
					}
				}
				if errors.Is(c.err, io.EOF) {
					return nil
				}
				return c.err
			}
			idle.Reset(tailIdle)
		case <-idle.C:
			if !flushed {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
}

// lastLines returns the last n lines of b. A final line without a newline
// counts as a line.
func lastLines(b []byte, n int) []byte {
	if n <= 0 {
		return nil
	}
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for ; n > 0; n-- {
		j := bytes.LastIndexByte(b[:end], '\n')
		if j < 0 {
			return b
		}
		if n == 1 {
			return b[j+1:]
		}
		end = j
	}
	return b
}

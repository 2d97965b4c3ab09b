package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// logCursor is how far the copy of a container's output has come: the
// daemon's timestamp of the last entry copied, and how many entries with
// exactly that timestamp were copied. A copy that starts again (after the
// daemon or the client restarted) asks the daemon for the output since At
// (which the daemon counts inclusively) and skips the first N entries
// stamped At, so that nothing is copied twice and nothing written in the
// meantime is lost.
type logCursor struct {
	At time.Time
	N  int
}

// advance moves the cursor over one copied entry stamped at.
func (c *logCursor) advance(at time.Time) {
	if at.Equal(c.At) {
		c.N++
		return
	}
	if at.After(c.At) {
		c.At, c.N = at, 1
	}
}

// skips reports whether an entry stamped at, read from a stream that
// started at the cursor start, was copied before. seen counts the entries
// stamped start.At this stream has passed so far.
func (start logCursor) skips(at time.Time, seen *int) bool {
	if start.At.IsZero() || at.After(start.At) {
		return false
	}
	if at.Before(start.At) {
		return true
	}
	*seen++
	return *seen <= start.N
}

// cursorFile keeps a container's log cursor on disk, in the task's
// directory (which the container does not see), so that a client that
// restarts copies what the container wrote while no client ran, and
// nothing the previous one copied. The task handle is stored once, at
// start, so the cursor cannot live in it. The file is rewritten in place
// after every entry copied: a client killed between the copy and the
// write copies at most that one entry twice.
type cursorFile struct {
	f           *os.File
	containerID string
}

// cursorRecordLen is the fixed length of the file's one record.
const cursorRecordLen = 64 + 1 + 19 + 1 + 10 + 1

// cursorPath is where the cursor of a task's container is kept, one file
// per container so that a restart's new container never shares one with
// the old; "" when the task has no directory.
func cursorPath(taskDir, containerID string) string {
	if taskDir == "" {
		return ""
	}
	return filepath.Join(taskDir, ".docker-log-cursor-"+shortID(containerID))
}

// openCursorFile opens (creating) the task's cursor file. A task without
// a directory gets a nil file, which keeps the cursor in memory only.
func openCursorFile(taskDir, containerID string) (*cursorFile, error) {
	p := cursorPath(taskDir, containerID)
	if p == "" {
		return nil, nil
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log cursor: %w", err)
	}
	return &cursorFile{f: f, containerID: containerID}, nil
}

// readCursor returns the cursor recorded for containerID, or false when
// the file is missing, unreadable or records another container.
func readCursor(taskDir, containerID string) (logCursor, bool) {
	p := cursorPath(taskDir, containerID)
	if p == "" {
		return logCursor{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) != cursorRecordLen {
		return logCursor{}, false
	}
	var id string
	var nanos int64
	var n int
	if _, err := fmt.Sscanf(string(b), "%64s %019d %010d\n", &id, &nanos, &n); err != nil || id != containerID {
		return logCursor{}, false
	}
	return logCursor{At: time.Unix(0, nanos), N: n}, true
}

// write records c. Errors are the caller's to log: a cursor that could
// not be kept costs duplicates after a restart, not output.
func (f *cursorFile) write(c logCursor) error {
	if f == nil {
		return nil
	}
	rec := fmt.Sprintf("%-64s %019d %010d\n", f.containerID, c.At.UnixNano(), c.N)
	_, err := f.f.WriteAt([]byte(rec), 0)
	return err
}

func (f *cursorFile) Close() {
	if f != nil {
		f.f.Close()
	}
}

// removeCursor removes the task's cursor file once its container is
// destroyed.
func removeCursor(taskDir, containerID string) {
	if p := cursorPath(taskDir, containerID); p != "" {
		_ = os.Remove(p)
	}
}

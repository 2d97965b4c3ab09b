package docker

import (
	"testing"
	"time"
)

// TestLastLineWithoutNewlineReachesTheLogs: output that ends without a
// newline (`printf done`) reaches the task's log FIFOs, on both streams.
// The daemon's follow stream left such a last line out about one run in
// three.
func TestLastLineWithoutNewlineReachesTheLogs(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	for range 5 {
		tt := newTestTask(t, cli, shell(`echo first; printf last; echo err >&2; printf tail >&2`))
		h := start(t, d, tt)
		if res := waitExit(t, d, h.TaskID, 30*time.Second); res.ExitCode != 0 {
			t.Fatalf("exit %+v", res)
		}
		tt.stdout.waitOutput(t, `"first\nlast"`, func(s string) bool { return s == "first\nlast" })
		tt.stderr.waitOutput(t, `"err\ntail"`, func(s string) bool { return s == "err\ntail" })
	}
}

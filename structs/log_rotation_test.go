package structs

import (
	"math"
	"testing"
)

// TestLogRotationKeepsTheGroupsLogsInItsDisk: the client rotates each of a
// task's two streams as its logs block says while the group's streams fit
// its ephemeral disk, and shrinks every stream's share in proportion when
// they do not, so that all the group's logs fit the disk the scheduler
// reserved: validation checks task by task (as Nomad), which lets a group
// of several tasks ask for more than its disk.
func TestLogRotationKeepsTheGroupsLogsInItsDisk(t *testing.T) {
	const mb = 1 << 20
	logs := func(files, sizeMB int) *LogConfig { return &LogConfig{MaxFiles: files, MaxFileSizeMB: sizeMB} }
	group := func(diskMB int, cfgs ...*LogConfig) *TaskGroup {
		tg := &TaskGroup{Name: "web", EphemeralDisk: &EphemeralDisk{SizeMB: diskMB}}
		for i, lc := range cfgs {
			tg.Tasks = append(tg.Tasks, &Task{Name: string(rune('a' + i)), LogConfig: lc})
		}
		return tg
	}
	cases := []struct {
		name      string
		tg        *TaskGroup
		wantBytes int64
		wantFiles int
	}{
		{"one task with the defaults fits the default disk as asked", group(300, nil), 10 * mb, 10},
		{"two tasks that fit keep their blocks", group(500, logs(10, 10), logs(10, 10)), 10 * mb, 10},
		{"four default tasks on the default disk keep the file size, with fewer files", group(300, nil, nil, nil, nil), 10 * mb, 3},
		{"a share under two files keeps two smaller files", group(10, logs(3, 3)), 5 * mb / 2, 2},
		{"the floor keeps files from getting absurdly small", group(1, logs(100, 100), logs(100, 100), logs(100, 100), logs(100, 100), logs(100, 100), logs(100, 100), logs(100, 100), logs(100, 100), logs(100, 100)), minLogFileBytes, 2},
		{"no group (an alloc without its job) keeps the task's block", nil, 10 * mb, 10},
		{"absurd blocks saturate instead of wrapping", group(300, logs(math.MaxInt, 2), logs(5, 1)), 2 * mb, 75},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := &Task{Name: "a"}
			if c.tg != nil {
				task = c.tg.Tasks[0]
			}
			b, f := c.tg.LogRotation(task)
			if b != c.wantBytes || f != c.wantFiles {
				t.Fatalf("LogRotation = %d bytes × %d files, want %d × %d", b, f, c.wantBytes, c.wantFiles)
			}
		})
	}

	// Whatever the blocks, the group's streams fit its disk; a stream held
	// up by the floor (a tiny share of a tiny disk) is the exception.
	for _, disk := range []int{10, 150, 300, 1000} {
		for _, n := range []int{1, 2, 3, 5, 8} {
			for _, lc := range []*LogConfig{nil, logs(1, 1), logs(10, 10), logs(3, 50), logs(100, 7)} {
				cfgs := make([]*LogConfig, n)
				for i := range cfgs {
					cfgs[i] = lc
				}
				cfgs[0] = logs(2, 9) // one task unlike the others
				tg := group(disk, cfgs...)
				var total int64
				for _, task := range tg.Tasks {
					b, f := tg.LogRotation(task)
					if f < 1 || b < minLogFileBytes {
						t.Fatalf("disk %d, %d tasks: %d × %d", disk, n, b, f)
					}
					if b > minLogFileBytes {
						total += 2 * b * int64(f)
					}
				}
				if total > int64(disk)*mb {
					t.Fatalf("disk %d MB, %d tasks of %+v: the streams may keep %d bytes", disk, n, lc, total)
				}
			}
		}
	}
}

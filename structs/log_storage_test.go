package structs

import (
	"math"
	"strings"
	"testing"
)

// TestLogStorageMustFitTheEphemeralDisk: each task's logs (max_files ×
// max_file_size) must be less than the group's ephemeral_disk.size, as in
// Nomad, and each logs block keeps at least one file of at least 1 MB.
func TestLogStorageMustFitTheEphemeralDisk(t *testing.T) {
	task := func(name string, files, sizeMB int) *Task {
		return &Task{Name: name, Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"},
			Resources: &Resources{CPU: 100, MemoryMB: 64}, LogConfig: &LogConfig{MaxFiles: files, MaxFileSizeMB: sizeMB}}
	}
	cases := []struct {
		name   string
		diskMB int // 0: the default, filled by Canonicalize
		tasks  []*Task
		want   string // "" means valid
	}{
		{"one task with the defaults on the default disk", 0, []*Task{{Name: "a", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"}}}, ""},
		{"two tasks with the defaults on the default disk", 0, []*Task{task("a", 10, 10), task("b", 10, 10)}, ""},
		{"four tasks with the defaults, as Nomad's lifecycle jobs have", 0, []*Task{task("a", 10, 10), task("b", 10, 10), task("c", 10, 10), task("d", 10, 10)}, ""},
		{"one task's logs larger than its disk", 100, []*Task{task("a", 10, 20)},
			`group "web" task "a": log storage (200 MB) must be less than requested disk capacity (100 MB); lower logs.max_files or logs.max_file_size, or raise the group's ephemeral_disk.size`},
		{"the one task of several whose logs do not fit is named", 150, []*Task{task("a", 10, 10), task("b", 15, 10)},
			`group "web" task "b": log storage (150 MB) must be less than requested disk capacity (150 MB)`},
		{"logs just under the disk", 201, []*Task{task("a", 10, 20)}, ""},
		{"logs equal to the disk leave no room for the task", 200, []*Task{task("a", 10, 20)}, `log storage (200 MB) must be less than requested disk capacity (200 MB)`},
		{"a bigger disk makes room", 1000, []*Task{task("a", 10, 20), task("b", 20, 40)}, ""},
		{"products that overflow are reported, not wrapped", 300, []*Task{task("a", math.MaxInt, 2)},
			`log storage (9223372036854775807 MB) must be less than requested disk capacity (300 MB)`},
		{"no files", 0, []*Task{task("a", 0, 10)}, `group "web" task "a": logs.max_files must be at least 1, got 0`},
		{"negative files", 0, []*Task{task("a", -1, 10)}, `logs.max_files must be at least 1, got -1`},
		{"empty files", 0, []*Task{task("a", 10, 0)}, `group "web" task "a": logs.max_file_size must be at least 1 (MB), got 0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := testJob()
			j.TaskGroups[0].Networks = nil
			j.TaskGroups[0].Tasks = c.tasks
			if c.diskMB > 0 {
				j.TaskGroups[0].EphemeralDisk = &EphemeralDisk{SizeMB: c.diskMB}
			}
			j.Canonicalize()
			err := j.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

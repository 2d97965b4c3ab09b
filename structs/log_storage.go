package structs

import "math"

// The logs a task keeps live in its allocation's alloc/logs, on the
// group's ephemeral disk, so what the logs blocks may keep is checked
// against what the group asks of the disk: a job must not reserve 300 MB
// and then fill gigabytes of the node's disk with logs that the scheduler
// never counted. As in Nomad a task's log storage is max_files ×
// max_file_size and must be less than the disk, leaving room for the
// task's own files; unlike Nomad, every task of the group shares that one
// disk, so the tasks' storage is summed. (The client keeps max_files for
// stdout and for stderr each; Nomad's formula, kept here, counts one.)

// validate checks one task's logs block on its own.
func (l *LogConfig) validate(p problems) {
	if l.MaxFiles < 1 {
		p.add("logs.max_files must be at least 1, got %d", l.MaxFiles)
	}
	if l.MaxFileSizeMB < 1 {
		p.add("logs.max_file_size must be at least 1 (MB), got %d", l.MaxFileSizeMB)
	}
}

// storageMB is the disk the task's logs may take, saturating instead of
// overflowing so that absurd settings are reported, not wrapped around.
func (l *LogConfig) storageMB() int64 {
	if l == nil || l.MaxFiles < 1 || l.MaxFileSizeMB < 1 {
		return 0
	}
	f, s := int64(l.MaxFiles), int64(l.MaxFileSizeMB)
	if f > math.MaxInt64/s {
		return math.MaxInt64
	}
	return f * s
}

// validateLogStorage adds a problem when the group's tasks may keep more
// logs than its ephemeral disk holds.
func validateLogStorage(tg *TaskGroup, p problems) {
	if tg.EphemeralDisk == nil || tg.EphemeralDisk.SizeMB <= 0 {
		return // the disk's own problem is reported already
	}
	var total int64
	for _, t := range tg.Tasks {
		s := t.LogConfig.storageMB()
		if total > math.MaxInt64-s {
			total = math.MaxInt64
			break
		}
		total += s
	}
	if disk := int64(tg.EphemeralDisk.SizeMB); total >= disk {
		p.add("log storage (%d MB) must be less than requested disk capacity (%d MB): the sum over the group's tasks of logs.max_files × logs.max_file_size; lower them or raise ephemeral_disk.size above %d",
			total, disk, total)
	}
}

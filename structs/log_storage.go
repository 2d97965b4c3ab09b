package structs

import "math"

// The logs a task keeps live in its allocation's alloc/logs, on the
// group's ephemeral disk, so what a logs block may keep is checked
// against what the group asks of the disk: a job must not reserve 300 MB
// and then fill gigabytes of the node's disk with logs the scheduler
// never counted. The rule is Nomad's, task by task: max_files ×
// max_file_size must be less than ephemeral_disk.size, leaving room for
// the task's own files. Summing over the group's tasks would be stricter
// (they share the disk), but it refuses jobs Nomad accepts: the common
// init + sidecar + main + cleanup group with default logs (4 × 100 MB)
// on the default 300 MB disk. (The client keeps max_files for stdout and
// for stderr each; Nomad's formula, kept here, counts one.) So the client
// holds the bound at run time instead: LogRotation shrinks each stream
// to its share of the disk when the group's streams together would not
// fit it.

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

// validateLogStorage adds a problem for each task of the group whose logs
// may take the group's whole ephemeral disk.
func validateLogStorage(tg *TaskGroup, p problems) {
	if tg.EphemeralDisk == nil || tg.EphemeralDisk.SizeMB <= 0 {
		return // the disk's own problem is reported already
	}
	disk := int64(tg.EphemeralDisk.SizeMB)
	for _, t := range tg.Tasks {
		if s := t.LogConfig.storageMB(); s >= disk {
			p.at(`task "`+t.Name+`"`).add("log storage (%d MB) must be less than requested disk capacity (%d MB); lower logs.max_files or logs.max_file_size, or raise the group's ephemeral_disk.size",
				s, disk)
		}
	}
}

// minLogFileBytes is the smallest file a shrunk rotation writes: below
// it, rotation churns more than it keeps.
const minLogFileBytes = 64 << 10

// LogRotation is how the client rotates each of task's two streams
// (stdout, stderr) in group tg: files of at most bytes each, at most
// files of them. It is the task's logs block unless the group's streams
// together could outgrow the group's ephemeral disk, which validation
// (task by task, as above) allows: then every stream's share shrinks in
// proportion to what its logs block asks, so that all the group's logs
// fit in the disk the scheduler reserved. A share keeps the block's file
// size and fewer files while it can hold two files, and smaller files
// after that, so a rotation never discards a stream's whole history.
func (tg *TaskGroup) LogRotation(task *Task) (bytes int64, files int) {
	lc := task.rotatedLogs()
	bytes, files = int64(lc.MaxFileSizeMB)<<20, lc.MaxFiles
	if tg == nil || tg.EphemeralDisk == nil || tg.EphemeralDisk.SizeMB <= 0 {
		return bytes, files
	}
	// In MB, two streams per task; in float64, since absurd blocks
	// (validation reports them) would overflow an int64 sum.
	var total float64
	for _, t := range tg.Tasks {
		total += 2 * float64(t.rotatedLogs().storageMB())
	}
	disk := float64(tg.EphemeralDisk.SizeMB)
	if total <= disk {
		return bytes, files
	}
	// The stream's share of the disk, in bytes: disk × own / total.
	share := int64(disk * (1 << 20) * float64(lc.storageMB()) / total)
	if share >= 2*bytes {
		return bytes, int(min(share/bytes, int64(files)))
	}
	files = min(files, 2)
	bytes = max(share/int64(files), minLogFileBytes)
	return bytes, files
}

// rotatedLogs is the logs block the client rotates the task's streams
// by: the task's own, or the defaults where it has none it could use.
func (t *Task) rotatedLogs() *LogConfig {
	if lc := t.LogConfig; lc != nil && lc.MaxFiles >= 1 && lc.MaxFileSizeMB >= 1 {
		return lc
	}
	return DefaultLogConfig()
}

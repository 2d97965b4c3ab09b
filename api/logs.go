package api

// LogConfig bounds the disk used by a task's stdout and stderr: the client
// rotates each stream over MaxFiles files of MaxFileSizeMB each.
type LogConfig struct {
	MaxFiles      *int
	MaxFileSizeMB *int

	// Enabled is the old, inverted spelling of Disabled, kept only so that
	// old jobs decode. Deprecated: use Disabled.
	Enabled *bool

	// Disabled turns log collection off for the task.
	Disabled *bool
}

// DefaultLogConfig returns the log settings of a task without a logs block.
func DefaultLogConfig() *LogConfig {
	return &LogConfig{
		MaxFiles:      new(10),
		MaxFileSizeMB: new(10),
		Disabled:      new(false),
	}
}

// Canonicalize fills unset fields from DefaultLogConfig.
func (l *LogConfig) Canonicalize() {
	d := DefaultLogConfig()
	if l.MaxFiles == nil {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxFileSizeMB == nil {
		l.MaxFileSizeMB = d.MaxFileSizeMB
	}
	if l.Disabled == nil {
		l.Disabled = d.Disabled
	}
}

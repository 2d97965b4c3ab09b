package api

import (
	"path"
	"path/filepath"
)

// TaskArtifact is a file or archive the client downloads into the task
// directory before the task starts (go-getter semantics: http, https and
// local files; see client/artifact).
type TaskArtifact struct {
	GetterSource  *string
	GetterOptions map[string]string
	GetterHeaders map[string]string

	// GetterMode is "any", "file" or "dir".
	GetterMode     *string
	GetterInsecure *bool
	RelativeDest   *string
	Chown          bool
}

// Canonicalize fills unset fields. The destination defaults to the task's
// local/ directory, or to local/<file name> for a single file.
func (a *TaskArtifact) Canonicalize() {
	if a.GetterMode == nil {
		a.GetterMode = new("any")
	}
	if a.GetterInsecure == nil {
		a.GetterInsecure = new(false)
	}
	if a.GetterSource == nil {
		a.GetterSource = new("")
	}
	if len(a.GetterOptions) == 0 {
		a.GetterOptions = nil
	}
	if len(a.GetterHeaders) == 0 {
		a.GetterHeaders = nil
	}
	if a.RelativeDest == nil {
		if *a.GetterMode == "file" {
			a.RelativeDest = new(filepath.Join("local", path.Base(*a.GetterSource)))
		} else {
			a.RelativeDest = new("local/")
		}
	}
}

package allocdir

import (
	"errors"
	"path/filepath"
	"strings"
)

// Places in the alloc dir that only the client writes, which a job's
// artifact or template destination may never name: the alloc's logs, and
// in each task's directory the markers of fetched artifacts and the
// directories downloads are staged in. The client trusts what it finds
// there (a marker says an artifact need not be fetched again; a log file
// is what `alloc logs` shows), so no task may own them or write them.
const (
	// ArtifactMarkersDir holds one file per artifact already fetched.
	ArtifactMarkersDir = ".artifacts"
	// ArtifactStagePrefix starts the name of a download's staging
	// directory.
	ArtifactStagePrefix = ".artifact-"
)

// ErrReserved is a destination among the client's own places.
var ErrReserved = errors.New("is the client's own (alloc/logs, a task's .artifacts): put a job's files under local/, secrets/, tmp/ or alloc/data")

// ClientOnlyTaskEntry reports whether name, an entry of a task's
// directory, is the client's own.
func ClientOnlyTaskEntry(name string) bool {
	return name == ArtifactMarkersDir || strings.HasPrefix(name, ArtifactStagePrefix)
}

// Reserved reports whether rel, relative to the alloc dir, is or lies
// under one of the client's own places.
func Reserved(rel string) bool {
	parts := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	if len(parts) < 2 {
		return false
	}
	if parts[0] == "alloc" {
		return parts[1] == "logs"
	}
	return ClientOnlyTaskEntry(parts[1])
}

// TaskWritableDirs are the directories of a task's directory, and
// SharedWritableDirs those of alloc/, that a task may write: a directory
// the client creates under them for a job's file may be given to the
// task's user; one created anywhere else stays the client's.
var (
	TaskWritableDirs   = []string{"local", "secrets", "tmp"}
	SharedWritableDirs = []string{"data", "tmp"}
)

package taskrunner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// artifactMarkers is the directory, in the task's directory, that holds
// one empty file per artifact already fetched for this alloc. Nomad
// fetches a task's artifacts once per alloc, not on every restart; the
// markers live with the alloc dir, so a restarted client does not fetch
// again either, and they go away with it. It is the client's alone
// (allocdir.Reserved): no artifact or template may write there, and the
// markers are read and written without following symlinks all the same.
const artifactMarkers = allocdir.ArtifactMarkersDir

// artifactHook is the prestart hook that downloads the task's artifacts
// this alloc has not fetched yet, with the task's environment for
// interpolation. A failure is recorded as a Failed Artifact Download
// event and returned as a failed start for the restart policy; it is
// recoverable unless fetching again cannot help (an unsupported source, a
// checksum mismatch). Kill and Shutdown abort a download in progress.
type artifactHook struct {
	// fetcher is nil for a zero Fetcher (see artifact.Sources for what
	// that allows).
	fetcher *artifact.Fetcher
	hookDeps
}

func (*artifactHook) Name() string { return "artifacts" }

func (h *artifactHook) Prestart(ctx context.Context, req *PrestartRequest, _ *PrestartResponse) error {
	task, td := req.Task, req.TaskDir
	var todo []int
	for i, a := range task.Artifacts {
		if !artifactFetched(td, i, a) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	h.events.EmitEvent(downloadingArtifactsEvent(h.clock.Now()))
	fetcher := h.fetcher
	if fetcher == nil {
		fetcher = &artifact.Fetcher{}
	}
	// Destinations name the task's directories where the client finds
	// them; chown = true gives the files to the user the task runs as,
	// the driver's default included.
	env := req.Env.WithDirs(hostDirs(req))
	user := task.User
	if req.User != nil {
		user = req.User.Name
	}
	for _, i := range todo {
		a := task.Artifacts[i]
		err := fetcher.Fetch(ctx, artifact.Request{Artifact: a, Env: env, AllocDir: req.AllocDir, TaskDir: td.Dir, User: user, Owner: req.User})
		if err == nil {
			err = markArtifact(td, i, a)
		}
		if err == nil {
			continue
		}
		h.logger.Warn("failed to download artifact", "artifact", i, "error", err)
		h.events.EmitEvent(artifactFailedEvent(h.clock.Now(), err))
		if artifact.IsRecoverable(err) || errors.Is(ctx.Err(), context.Canceled) {
			return &drivers.RecoverableError{Err: err}
		}
		return err
	}
	return nil
}

// artifactMarker names artifact i's marker after its place and its
// contents as the job wrote them, so a job version that changes an
// artifact in place is fetched again.
func artifactMarker(td allocdir.TaskDir, i int, a *structs.TaskArtifact) string {
	b, _ := json.Marshal(a) // plain data: never fails
	sum := sha256.Sum256(b)
	return filepath.Join(td.Dir, artifactMarkers, fmt.Sprintf("%d-%s", i, hex.EncodeToString(sum[:8])))
}

// artifactFetched reports whether artifact i's marker is there: a
// regular file, looked at without following a symlink.
func artifactFetched(td allocdir.TaskDir, i int, a *structs.TaskArtifact) bool {
	fi, err := os.Lstat(artifactMarker(td, i, a))
	return err == nil && fi.Mode().IsRegular()
}

func markArtifact(td allocdir.TaskDir, i int, a *structs.TaskArtifact) error {
	p := artifactMarker(td, i, a)
	dir, err := os.Open(td.Dir)
	if err == nil {
		defer dir.Close()
		var markers *os.File
		if markers, err = allocdir.OpenDirAt(dir, artifactMarkers, true, 0o755); err == nil {
			defer markers.Close()
			err = allocdir.WriteFileAt(markers, filepath.Base(p), nil, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("record artifact %d as fetched: %w", i, err)
	}
	return nil
}

func downloadingArtifactsEvent(now time.Time) *structs.TaskEvent {
	e := newEvent(structs.TaskDownloadingArtifacts, now)
	e.DisplayMessage = "Client is downloading artifacts"
	return e
}

func artifactFailedEvent(now time.Time, err error) *structs.TaskEvent {
	e := newEvent(structs.TaskArtifactDownloadFailed, now)
	e.SetDownloadError(err.Error())
	e.DisplayMessage = err.Error()
	return e
}

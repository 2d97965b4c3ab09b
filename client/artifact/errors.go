package artifact

import (
	"errors"
	"fmt"

	"github.com/drover-sched/drover/client/allocdir"
)

// Errors a fetch can wrap; test them with errors.Is on what Fetch returns.
var (
	// ErrUnsupportedSource is a source Drover does not fetch (git, hg,
	// s3, gcs, or an address whose kind it cannot tell).
	ErrUnsupportedSource = errors.New("unsupported artifact source")
	// ErrChecksumMismatch is a download whose checksum is not the one
	// the `checksum` option asks for.
	ErrChecksumMismatch = errors.New("checksum mismatch")
	// ErrInvalidOption is a `checksum` option that is not "type:value"
	// with a known type and a hex value of its length, or a mode that is
	// not any, file or dir.
	ErrInvalidOption = errors.New("invalid artifact option")
	// ErrTooLarge is a download or an unpacked archive past its bound.
	ErrTooLarge = errors.New("artifact too large")
	// ErrUnsafeArchive is an archive entry, or a symlink, that leads
	// outside the destination.
	ErrUnsafeArchive = errors.New("artifact leads outside its destination")
	// ErrSourceRefused is a source the client's Sources do not allow: a
	// local file outside the allowed directories, or an address such as
	// loopback or link-local. Its message names the setting that would
	// allow it.
	ErrSourceRefused = errors.New("artifact source refused")
)

// Error is a failed fetch of one artifact.
type Error struct {
	// Source is the artifact's source as the job wrote it (before
	// interpolation, so no secret from the environment is repeated).
	Source string
	Err    error
	// Recoverable says whether fetching again may succeed.
	Recoverable bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("failed to download artifact %q: %v", e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsRecoverable reports whether err is a fetch worth trying again: any
// error that is not an *Error marked final.
func IsRecoverable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Recoverable
	}
	return true
}

// final reports whether err, from any step of a fetch, can never succeed
// on a retry with the same job.
func final(err error) bool {
	return errors.Is(err, ErrUnsupportedSource) || errors.Is(err, ErrChecksumMismatch) ||
		errors.Is(err, ErrInvalidOption) || errors.Is(err, errDestinationEscapes) ||
		errors.Is(err, allocdir.ErrReserved) ||
		errors.Is(err, ErrSourceRefused)
}

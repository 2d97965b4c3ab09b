package artifact

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	getter "github.com/hashicorp/go-getter/v2"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/structs"
)

// Bounds of one artifact, used where a Fetcher leaves its field zero.
const (
	// DefaultMaxDownloadBytes bounds one download (1 GiB). Nomad's
	// default is 100 GB; a Drover client shares its disk with the tasks
	// it runs, so it asks a job for more care.
	DefaultMaxDownloadBytes int64 = 1 << 30
	// DefaultMaxUnpackedBytes bounds what one archive may unpack to
	// (4 GiB: well-compressed binaries and data unpack to a few times
	// their size).
	DefaultMaxUnpackedBytes int64 = 4 << 30
	// DefaultMaxArchiveFiles bounds the entries of one archive, Nomad's
	// default decompression_file_count_limit.
	DefaultMaxArchiveFiles = 4096
	// DefaultTimeout bounds one artifact's fetch, Nomad's default
	// http_read_timeout.
	DefaultTimeout = 30 * time.Minute
)

// Modes of an artifact (GetterMode), as Nomad spells them.
const (
	ModeAny  = "any"
	ModeFile = "file"
	ModeDir  = "dir"
)

// errDestinationEscapes is a destination outside the alloc dir.
var errDestinationEscapes = allocdir.ErrPathEscapes

// umask keeps setuid and setgid bits from an artifact from reaching the
// task directory, as Nomad does; permissions are otherwise kept.
const umask = fs.ModeSetuid | fs.ModeSetgid

// Replacer interpolates ${...} references with a task's environment.
type Replacer interface {
	ReplaceEnv(string) string
}

// Fetcher downloads artifacts. The zero value uses the Default bounds
// and the safe default Sources.
type Fetcher struct {
	MaxDownloadBytes int64
	MaxUnpackedBytes int64
	MaxArchiveFiles  int
	Timeout          time.Duration
	// Sources says where artifacts may come from.
	Sources Sources

	// newGuard makes the guard of one fetch (newDialGuard; tests give
	// it a proxy or this machine's addresses).
	newGuard func(*Sources) *dialGuard
}

// Request is one artifact to fetch for one task.
type Request struct {
	Artifact *structs.TaskArtifact
	// Env interpolates the source, options, headers and destination;
	// nil leaves them as written.
	Env Replacer
	// AllocDir is the alloc's tree; TaskDir is the task's directory in
	// it, which a relative destination is relative to.
	AllocDir *allocdir.AllocDir
	TaskDir  string
	// User owns the fetched files when the artifact asks for chown.
	User string
	// Owner, when set, is User as the task's driver resolved it (the
	// task runner's user hook): the chown uses its ids rather than a
	// lookup of User through the host's NSS, which may disagree with
	// the passwd file the task is run from.
	Owner *taskuser.User
}

// Fetch downloads one artifact into the task's directory. On error the
// destination is left as it was, and the *Error says whether a retry may
// help.
func (f *Fetcher) Fetch(ctx context.Context, req Request) error {
	a := req.Artifact
	err := f.fetch(ctx, req)
	if err == nil {
		return nil
	}
	return &Error{Source: a.GetterSource, Err: err, Recoverable: !final(err)}
}

func (f *Fetcher) fetch(ctx context.Context, req Request) error {
	a := req.Artifact
	env := req.Env
	if env == nil {
		env = noEnv{}
	}
	src := env.ReplaceEnv(a.GetterSource)
	if err := checkSource(src); err != nil {
		return err
	}
	opts := make(map[string]string, len(a.GetterOptions))
	for k, v := range a.GetterOptions {
		opts[k] = env.ReplaceEnv(v)
	}
	var sumType string
	if c, ok := opts["checksum"]; ok {
		typ, _, err := parseChecksum(c)
		if err != nil {
			return err
		}
		sumType = typ
	}
	mode, err := getMode(a.GetterMode)
	if err != nil {
		return err
	}
	addr, err := address(src, opts)
	if err != nil {
		return err
	}
	dest, err := destination(req, env.ReplaceEnv(a.RelativeDest), a.GetterMode, src)
	if err != nil {
		return err
	}

	// Stage next to the destination, in the alloc dir, so that the final
	// move is a rename on one file system.
	if err := os.MkdirAll(req.TaskDir, 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(req.TaskDir, allocdir.ArtifactStagePrefix)
	if err != nil {
		return fmt.Errorf("staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	staged := filepath.Join(stage, "artifact")

	timeout := or(f.Timeout, DefaultTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	guard := newDialGuard(&f.Sources)
	if f.newGuard != nil {
		guard = f.newGuard(&f.Sources)
	}
	client := f.client(a, env, guard, req.AllocDir.Root)
	_, err = client.Get(ctx, &getter.Request{
		Src:             addr,
		Dst:             staged,
		GetMode:         mode,
		Copy:            true,
		Umask:           umask,
		DisableSymlinks: true,
	})
	if refused := guard.refusal(); refused != nil {
		// Whatever go-getter made of it, the refusal is the reason.
		return refused
	}
	if err != nil {
		var ce *getter.ChecksumError
		if errors.As(err, &ce) {
			return fmt.Errorf("%w: %s expected %s:%x, got %s:%x", ErrChecksumMismatch, src, sumType, ce.Expected, sumType, ce.Actual)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("fetching %s took longer than %v: %w", src, timeout, err)
		}
		return err
	}
	if _, err := os.Lstat(staged); err != nil {
		// go-getter's HTTP getter in dir mode only follows
		// X-Terraform-Get, which Drover (like Nomad) turns off.
		return fmt.Errorf("nothing was fetched from %s: mode %q over HTTP needs an archive (.tar.gz, .zip, ...)", src, a.GetterMode)
	}
	if err := checkLinks(stage); err != nil {
		return err
	}
	if a.Chown && (req.User != "" || req.Owner != nil) {
		if err := chown(staged, req.User, req.Owner); err != nil {
			return err
		}
	}
	stageDir, err := os.Open(stage)
	if err != nil {
		return fmt.Errorf("staging directory: %w", err)
	}
	defer stageDir.Close()
	return place(req.AllocDir, stageDir, "artifact", dest, mode == getter.ModeFile)
}

// client is go-getter with only the getters Drover supports: HTTP through
// guard, and local files through localGetter, from allocDir and the
// directories Sources allows.
func (f *Fetcher) client(a *structs.TaskArtifact, env Replacer, guard *dialGuard, allocDir string) *getter.Client {
	var header http.Header
	if len(a.GetterHeaders) > 0 {
		header = make(http.Header, len(a.GetterHeaders))
		for k, v := range a.GetterHeaders {
			header.Set(k, env.ReplaceEnv(v))
		}
	}
	maxBytes := or(f.MaxDownloadBytes, DefaultMaxDownloadBytes)
	web := &getter.HttpGetter{
		Client: httpClient(a.GetterInsecure, maxBytes, guard),
		Header: header,
		// As Nomad does: no X-Terraform-Get indirection, and no HEAD
		// request first (which can resume a download into a stale file).
		XTerraformGetDisabled: true,
		DoNotCheckHeadFirst:   true,
	}
	local := &localGetter{
		roots:    append([]string{allocDir}, f.Sources.LocalPaths...),
		files:    f.Sources.LocalFiles,
		anyPath:  f.Sources.AnyLocalPath,
		maxBytes: maxBytes,
		maxFiles: or(f.MaxArchiveFiles, DefaultMaxArchiveFiles),
	}
	return &getter.Client{
		Getters: []getter.Getter{web, local},
		Decompressors: decompressors(limits{
			bytes: or(f.MaxUnpackedBytes, DefaultMaxUnpackedBytes),
			files: or(f.MaxArchiveFiles, DefaultMaxArchiveFiles),
		}),
		DisableSymlinks: true,
	}
}

func getMode(m string) (getter.Mode, error) {
	switch m {
	case "", ModeAny:
		return getter.ModeAny, nil
	case ModeFile:
		return getter.ModeFile, nil
	case ModeDir:
		return getter.ModeDir, nil
	}
	return getter.ModeInvalid, fmt.Errorf("%w: mode %q must be any, file or dir", ErrInvalidOption, m)
}

// destination returns where an artifact goes, relative to the alloc dir.
// A relative destination is relative to the task's directory; an
// absolute one (such as "${NOMAD_TASK_DIR}/bin", interpolated) must name
// a place in the alloc dir. Neither may lead out of the alloc dir: ".."
// is refused here, and symlinks when the artifact is placed (place).
func destination(req Request, dest, mode, src string) (string, error) {
	if dest == "" {
		dest = "local/"
		if mode == ModeFile {
			dest = filepath.Join("local", filepath.Base(strings.SplitN(src, "?", 2)[0]))
		}
	}
	full := dest
	if !filepath.IsAbs(full) {
		full = filepath.Join(req.TaskDir, dest)
	}
	root, err := filepath.EvalSymlinks(req.AllocDir.Root)
	if err != nil {
		return "", fmt.Errorf("alloc dir: %w", err)
	}
	rel, err := filepath.Rel(req.AllocDir.Root, full)
	if err != nil || !filepath.IsLocal(rel) {
		// The alloc dir's own path may be written through a symlink.
		if rel2, err2 := filepath.Rel(root, full); err2 == nil && filepath.IsLocal(rel2) {
			rel, err = rel2, nil
		} else {
			return "", fmt.Errorf("destination %q: %w", dest, allocdir.ErrPathEscapes)
		}
	}
	if allocdir.Reserved(rel) {
		return "", fmt.Errorf("destination %q %w", dest, allocdir.ErrReserved)
	}
	// Refuse a link that is there already before anything is fetched;
	// place makes the check that counts, at write time.
	if _, err := req.AllocDir.HostPath(rel); err != nil {
		return "", err
	}
	return filepath.Clean(rel), nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

type noEnv struct{}

func (noEnv) ReplaceEnv(s string) string { return s }

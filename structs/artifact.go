package structs

import (
	"encoding/hex"
	"path/filepath"
	"strings"
)

// Task events of the artifact step, with Nomad's type strings.
const (
	// TaskDownloadingArtifacts: the client is fetching the task's
	// artifacts before it starts.
	TaskDownloadingArtifacts = "Downloading Artifacts"
	// TaskArtifactDownloadFailed: an artifact could not be fetched; the
	// event's DownloadError says why.
	TaskArtifactDownloadFailed = "Failed Artifact Download"
)

// artifactChecksumSizes are the checksum types an artifact's `checksum`
// option may name, with the length of their value in bytes: the ones
// Nomad accepts.
var artifactChecksumSizes = map[string]int{"md5": 16, "sha1": 20, "sha256": 32, "sha512": 64}

// validate checks what can be known before a client fetches the artifact:
// a source, a well-formed checksum, a known mode, and a destination that
// stays in the alloc dir. Whether the source can be reached, and what its
// ${...} references become, only the client can tell.
func (a *TaskArtifact) validate(p problems) {
	if strings.TrimSpace(a.GetterSource) == "" {
		p.add("source is missing (e.g. source = \"https://example.com/app.tar.gz\")")
	}
	switch a.GetterMode {
	case "", "any", "file", "dir":
	default:
		p.add("mode %q must be any, file or dir", a.GetterMode)
	}
	// The destination is relative to the task's directory; the task may
	// reach the shared alloc dir ("../alloc/data") but nothing above it.
	// An absolute destination is checked by the client, where the
	// environment that usually builds it (${NOMAD_TASK_DIR}) is known.
	if a.RelativeDest != "" && !filepath.IsAbs(a.RelativeDest) {
		if rel := filepath.Join("task", a.RelativeDest); !filepath.IsLocal(rel) {
			p.add("destination %q leads outside the alloc dir (keep it under the task dir, or ../alloc)", a.RelativeDest)
		}
	}
	if c, ok := a.GetterOptions["checksum"]; ok {
		validateArtifactChecksum(strings.TrimSpace(c), p)
	}
}

func validateArtifactChecksum(c string, p problems) {
	typ, sum, ok := strings.Cut(c, ":")
	if !ok {
		p.add("options.checksum %q must be \"type:value\" with type md5, sha1, sha256 or sha512", c)
		return
	}
	size, known := artifactChecksumSizes[strings.ToLower(typ)]
	if !known {
		p.add("options.checksum type %q must be md5, sha1, sha256 or sha512", typ)
		return
	}
	if strings.Contains(sum, "${") {
		return // interpolated on the client
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != size {
		p.add("options.checksum %q: a %s value is %d hex digits", c, strings.ToLower(typ), 2*size)
	}
}

package agent

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/dustin/go-humanize"

	"github.com/drover-sched/drover/nomad"
)

// bodyLimit is how large a request body an endpoint takes, and the
// setting that says so, for the 413 that refuses a larger one.
type bodyLimit struct {
	n       int64
	setting string
}

// jobBodyEnvelope is what a job endpoint's body may hold beyond the job:
// the request around it, the variables of a parse. The job itself may
// take twice job_max_source_size in JSON, which spells out what the
// server's size check counts in msgpack.
const jobBodyEnvelope = 64 << 10

func (s *httpAPI) bodyLimit() bodyLimit {
	n := s.config().Limits.HTTPMaxBodySize
	if n <= 0 {
		n = DefaultHTTPMaxBodySize
	}
	return bodyLimit{n: n, setting: "limits.http_max_body_size"}
}

func (s *httpAPI) jobSourceLimit() int64 {
	if n := s.config().Server.JobMaxSourceSize; n > 0 {
		return n
	}
	return nomad.DefaultJobMaxSourceSize
}

func (s *httpAPI) jobBodyLimit() bodyLimit {
	return bodyLimit{n: 2*s.jobSourceLimit() + jobBodyEnvelope, setting: "server.job_max_source_size (a job body may be twice that plus 64 KiB)"}
}

// tooLarge is the 413 for a body over l.
func tooLarge(l bodyLimit) error {
	return &codedError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf(
		"request body is larger than %d bytes (%s), the limit set by %s; send less, or raise the limit in the agent's configuration",
		l.n, humanize.IBytes(uint64(l.n)), l.setting)}
}

// limitBody is the one place every request body is bounded: a body that
// says it is too large is refused before a byte is read, and one that
// turns out too large fails its read with the same 413, so no handler
// ever holds more than the limit.
func limitBody(w http.ResponseWriter, r *http.Request, l bodyLimit) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if r.ContentLength > l.n {
		return tooLarge(l)
	}
	r.Body = &limitedBody{rc: http.MaxBytesReader(w, r.Body, l.n), limit: l}
	return nil
}

// limitedBody turns http.MaxBytesReader's error into the 413 that names
// the setting, so handlers that pass a read error on return it as is.
type limitedBody struct {
	rc    io.ReadCloser
	limit bodyLimit
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return n, tooLarge(b.limit)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/drover-sched/drover/command/agent/config"
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
		n = config.DefaultHTTPMaxBodySize
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

// defaultBodyTimeout bounds how long a request body may take to arrive,
// from the end of its headers: a job body of a few MB needs well under a
// second on any link a cluster is run over, and the RPC port gives a
// large message as long (rpcx.DefaultMessageReadTimeout).
const defaultBodyTimeout = 30 * time.Second

// bodyDeadline gives every request body of h the body timeout to arrive.
// Without it a caller that sent most of a body and then nothing held its
// connection, a goroutine and what had arrived (up to the body limit) for
// as long as it kept the connection open, and a few hundred such
// connections hold gigabytes. The read deadline is set on the connection
// when the request comes in; net/http clears it once the body has been
// read to its end (it then reads on to notice the caller going away) and
// sets its own for the next request's headers, so a handler that goes on
// waiting, or a blocking query later on the same keep-alive connection,
// is never cut short. A body that misses it fails its read with a 408 and
// the connection is closed; net/http's own read of what a handler left of
// a body before it answers is bounded by it too.
func (s *httpAPI) bodyDeadline(h http.Handler) http.Handler {
	timeout := s.bodyTimeout
	if timeout <= 0 {
		timeout = defaultBodyTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout)); err != nil {
			// A writer without deadlines (an in-memory test recorder).
			h.ServeHTTP(w, r)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, header: w.Header(), timeout: timeout}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody turns a read that hit the body deadline into a 408 that
// says why, answered on a connection that then closes (what is left of
// the body would otherwise be read as the next request).
type deadlineBody struct {
	io.ReadCloser
	header  http.Header
	timeout time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var te interface{ Timeout() bool }
	if err != nil && errors.As(err, &te) && te.Timeout() {
		b.header.Set("Connection", "close")
		return n, &codedError{code: http.StatusRequestTimeout, msg: fmt.Sprintf(
			"the request body did not arrive within %s; send it at once, or closer to the agent", b.timeout)}
	}
	return n, err
}

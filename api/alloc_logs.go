package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Log origins: where LogsOptions.Offset counts from.
const (
	OriginStart = "start"
	OriginEnd   = "end"
)

// LogsOptions select which log to read and how.
type LogsOptions struct {
	// Task names the task; required.
	Task string

	// Type is "stdout" (the default) or "stderr".
	Type string

	// Follow keeps the stream open and delivers new output as it is
	// written, until the context is cancelled or the task's logs end.
	Follow bool

	// Origin and Offset choose where reading starts: Offset bytes from the
	// start or from the end of the log. The default is the start.
	Origin string
	Offset int64

	// Plain asks the agent for the raw bytes instead of framed JSON.
	Plain bool
}

// StreamFrame is one frame of a framed log stream. Data holds log bytes
// (base64 in JSON); a frame with FileEvent set reports that the file was
// truncated or deleted; a frame with neither is a heartbeat.
type StreamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// IsHeartbeat reports whether the frame carries nothing.
func (f *StreamFrame) IsHeartbeat() bool {
	return len(f.Data) == 0 && f.FileEvent == "" && f.File == "" && f.Offset == 0
}

// Logs opens a task's log (GET /v1/client/fs/logs/:alloc_id). The returned
// reader yields the log bytes, with framing removed; closing it ends the
// stream. No request timeout applies, since a followed log stays open for
// as long as the task runs; bound it with ctx.
func (a *Allocations) Logs(ctx context.Context, allocID string, opts LogsOptions, q *QueryOptions) (io.ReadCloser, error) {
	if opts.Task == "" {
		return nil, errors.New("logs: a task name is required")
	}
	logType := opts.Type
	if logType == "" {
		logType = "stdout"
	}
	if logType != "stdout" && logType != "stderr" {
		return nil, fmt.Errorf("logs: type must be stdout or stderr, not %q", logType)
	}
	origin := opts.Origin
	if origin == "" {
		origin = OriginStart
	}
	if origin != OriginStart && origin != OriginEnd {
		return nil, fmt.Errorf("logs: origin must be start or end, not %q", origin)
	}

	r := a.c.newRequest(http.MethodGet, "/v1/client/fs/logs/"+escape(allocID))
	r.setQueryOptions(q)
	r.ctx = ctx
	r.stream = true
	r.params.Set("task", opts.Task)
	r.params.Set("type", logType)
	r.params.Set("follow", strconv.FormatBool(opts.Follow))
	r.params.Set("origin", origin)
	r.params.Set("offset", strconv.FormatInt(opts.Offset, 10))
	if opts.Plain {
		r.params.Set("plain", "true")
	}
	resp, cancel, _, err := a.c.do(r)
	if err != nil {
		return nil, err
	}
	if opts.Plain {
		return &cancelBody{ReadCloser: resp.Body, cancel: cancel}, nil
	}
	return &frameReader{dec: json.NewDecoder(resp.Body), body: resp.Body, cancel: cancel}, nil
}

// frameReader turns a stream of JSON frames into the bytes they carry.
type frameReader struct {
	dec    *json.Decoder
	body   io.Closer
	cancel context.CancelFunc
	buf    []byte
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		var frame StreamFrame
		if err := f.dec.Decode(&frame); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("reading log stream: %w", err)
		}
		f.buf = frame.Data
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

func (f *frameReader) Close() error {
	err := f.body.Close()
	f.cancel()
	return err
}

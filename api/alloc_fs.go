package api

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// AllocFileInfo describes a file or directory of an allocation's
// directory. FileMode is in ls's notation ("-rw-r--r--", "drwxr-xr-x").
type AllocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string
}

// AllocFS reads an allocation's directory on the node that runs it.
// Paths are relative to the allocation's directory: "/" is the directory
// itself, "alloc/logs" its shared log directory, "<task>/local" a task's
// own. No path leads outside it.
type AllocFS struct{ c *Client }

// AllocFS returns the allocation directory endpoints.
func (c *Client) AllocFS() *AllocFS { return &AllocFS{c: c} }

// List lists a directory (GET /v1/client/fs/ls/:alloc_id?path=).
func (f *AllocFS) List(allocID, path string, q *QueryOptions) ([]*AllocFileInfo, *QueryMeta, error) {
	var out []*AllocFileInfo
	qm, err := f.c.query("/v1/client/fs/ls/"+escape(allocID), &out, withParams(q, "path", path))
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Stat describes one file or directory (GET /v1/client/fs/stat/:alloc_id).
func (f *AllocFS) Stat(allocID, path string, q *QueryOptions) (*AllocFileInfo, *QueryMeta, error) {
	var out AllocFileInfo
	qm, err := f.c.query("/v1/client/fs/stat/"+escape(allocID), &out, withParams(q, "path", path))
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Cat reads a whole file (GET /v1/client/fs/cat/:alloc_id). No request
// timeout applies, since a file may be large; bound it with the options'
// context.
func (f *AllocFS) Cat(allocID, path string, q *QueryOptions) (io.ReadCloser, error) {
	return f.raw("/v1/client/fs/cat/"+escape(allocID), withParams(q, "path", path))
}

// ReadAt reads limit bytes of a file from offset (all of the rest when
// limit <= 0) (GET /v1/client/fs/readat/:alloc_id).
func (f *AllocFS) ReadAt(allocID, path string, offset, limit int64, q *QueryOptions) (io.ReadCloser, error) {
	q = withParams(q, "path", path, "offset", strconv.FormatInt(offset, 10), "limit", strconv.FormatInt(limit, 10))
	return f.raw("/v1/client/fs/readat/"+escape(allocID), q)
}

func (f *AllocFS) raw(path string, q *QueryOptions) (io.ReadCloser, error) {
	r := f.c.newRequest(http.MethodGet, path)
	r.setQueryOptions(q)
	r.stream = true
	resp, cancel, _, err := f.c.do(r)
	if err != nil {
		return nil, err
	}
	return &cancelBody{ReadCloser: resp.Body, cancel: cancel}, nil
}

package httpapi

import (
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/allocdir"
)

// Reading an allocation's directory: ls, stat, cat and readat, with
// Nomad's paths, parameters and AllocFileInfo. Paths are relative to the
// allocation's directory and cannot leave it (client/allocdir checks).

func (s *httpAPI) clientFSList(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if path == "" {
		path = "/"
	}
	c, allocID, ok := s.localFS(w, r, nil)
	if !ok {
		return
	}
	files, err := c.AllocFileList(allocID, path)
	if err != nil {
		s.writeError(w, r, clientError(err))
		return
	}
	out := make([]*api.AllocFileInfo, 0, len(files))
	for _, f := range files {
		out = append(out, fileInfoOut(f))
	}
	s.writeJSON(w, r, out)
}

func (s *httpAPI) clientFSStat(w http.ResponseWriter, r *http.Request) {
	path, err := pathParam(r)
	c, allocID, ok := s.localFS(w, r, err)
	if !ok {
		return
	}
	fi, err := c.AllocFileStat(allocID, path)
	if err != nil {
		s.writeError(w, r, clientError(err))
		return
	}
	s.writeJSON(w, r, fileInfoOut(fi))
}

func (s *httpAPI) clientFSCat(w http.ResponseWriter, r *http.Request) {
	path, err := pathParam(r)
	c, allocID, ok := s.localFS(w, r, err)
	if !ok {
		return
	}
	s.serveFile(w, r, c, allocID, path, 0, 0)
}

func (s *httpAPI) clientFSReadAt(w http.ResponseWriter, r *http.Request) {
	path, err := pathParam(r)
	var offset, limit int64
	if err == nil {
		offset, err = int64Param(r, "offset")
	}
	if err == nil && offset < 0 {
		err = badRequest("offset %d must not be negative", offset)
	}
	if err == nil {
		limit, err = int64Param(r, "limit")
	}
	c, allocID, ok := s.localFS(w, r, err)
	if !ok {
		return
	}
	s.serveFile(w, r, c, allocID, path, offset, limit)
}

// serveFile writes limit bytes of the file from offset (the rest of it
// when limit <= 0). Errors found before the first byte get their status;
// a read that fails later can only end the body early.
func (s *httpAPI) serveFile(w http.ResponseWriter, r *http.Request, c ClientActions, allocID, path string, offset, limit int64) {
	f, err := c.AllocFileOpen(allocID, path)
	if err != nil {
		s.writeError(w, r, clientError(err))
		return
	}
	defer f.Close()
	if limit <= 0 {
		limit = math.MaxInt64 - offset
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, io.NewSectionReader(f, offset, limit)); err != nil {
		s.logger.Debug("file read ended early", "alloc_id", allocID, "path", path, "error", err)
	}
}

// localFS writes parseErr if there is one, and otherwise finds the
// allocation: ok when this agent's client has it; when not, the request
// has been forwarded or refused.
func (s *httpAPI) localFS(w http.ResponseWriter, r *http.Request, parseErr error) (ClientActions, string, bool) {
	if parseErr != nil {
		s.writeError(w, r, parseErr)
		return nil, "", false
	}
	allocID, local, err := s.locateAlloc(w, r, capsFS)
	if err == nil && local {
		var c ClientActions
		if c, err = s.localActions(); err == nil {
			return c, allocID, true
		}
	}
	if err != nil {
		s.writeError(w, r, err)
	}
	return nil, "", false
}

func pathParam(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", badRequest("path is required (?path=<file in the allocation directory>)")
	}
	return p, nil
}

// int64Param reads an optional integer parameter; absent is 0.
func int64Param(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("%s %q must be an integer", name, v)
	}
	return n, nil
}

func fileInfoOut(f allocdir.FileInfo) *api.AllocFileInfo {
	return &api.AllocFileInfo{Name: f.Name, IsDir: f.IsDir, Size: f.Size, FileMode: f.Mode.String(), ModTime: f.ModTime, ContentType: f.ContentType}
}

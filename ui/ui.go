package ui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
)

//go:embed assets
var embedded embed.FS

// Prefix is the URL path the UI is served under, as in Nomad.
const Prefix = "/ui/"

// assetPrefix is where the files of assets/ are served, below Prefix.
const assetPrefix = Prefix + "assets/"

// CSP is the Content-Security-Policy of every UI answer. The UI needs
// nothing but its own files and its own origin's API: no inline script or
// style (so injected markup cannot run), no eval, no other origin, no
// plugins, and no framing (so it cannot be clickjacked into pressing
// "Drain"). Styles set through the CSSOM (element.style) are not inline
// styles to CSP, which is how the bars get their widths.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// asset is one embedded file, ready to send.
type asset struct {
	name  string
	ctype string
	etag  string
	body  []byte
	gz    []byte // nil when gzip does not make it smaller
}

// Handler serves the UI below Prefix. Build it with New.
type Handler struct {
	files map[string]*asset // by path below assetPrefix
	index *asset
}

// New reads the embedded assets and compresses each once.
func New() (*Handler, error) {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		return nil, err
	}
	return newHandler(sub)
}

func newHandler(files fs.FS) (*Handler, error) {
	h := &Handler{files: map[string]*asset{}}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		a, err := newAsset(p, body)
		if err != nil {
			return err
		}
		h.files[p] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: reading the embedded assets: %w", err)
	}
	if h.index = h.files["index.html"]; h.index == nil {
		return nil, fmt.Errorf("ui: the embedded assets have no index.html")
	}
	return h, nil
}

func newAsset(name string, body []byte) (*asset, error) {
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	// The system's MIME table may lack these or name JavaScript with a
	// legacy type; module scripts need a JavaScript type to run at all.
	switch path.Ext(name) {
	case ".js":
		ctype = "text/javascript; charset=utf-8"
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".html":
		ctype = "text/html; charset=utf-8"
	}
	sum := sha256.Sum256(body)
	a := &asset{name: name, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, body: body}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() < len(body) {
		a.gz = buf.Bytes()
	}
	return a, nil
}

// ServeHTTP answers GET and HEAD below Prefix: a file of assets/ under
// Prefix+"assets/", index.html for every other path (the application
// routes deep links such as /ui/jobs/web@default itself), 404 for an
// asset that does not exist, 405 for other methods.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, fmt.Sprintf("method %s not allowed: the UI answers GET and HEAD", r.Method), http.StatusMethodNotAllowed)
		return
	}
	if !strings.HasPrefix(r.URL.Path, Prefix) {
		http.NotFound(w, r)
		return
	}
	a := h.index
	if rest, ok := strings.CutPrefix(r.URL.Path, assetPrefix); ok {
		if a = h.files[rest]; a == nil {
			http.Error(w, fmt.Sprintf("no UI asset %q", r.URL.Path), http.StatusNotFound)
			return
		}
	}
	a.serve(w, r)
}

func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("ETag", a.etag)
	// Revalidate every time: the ETag makes that a 304 without a body,
	// and a new agent version's files are never mixed with the old.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		hd.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func setSecurityHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
}

// etagMatches reports whether an If-None-Match list names etag.
func etagMatches(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimPrefix(strings.TrimSpace(e), "W/")
		if e == etag || e == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip: it
// is listed (or "*" is) without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// Redirect sends the agent's root to the UI, as Nomad's agent does.
func Redirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix, http.StatusTemporaryRedirect)
}

// Weight is the size of the files a browser loads on its first visit:
// index.html, the stylesheet and every JavaScript module (the pages are
// imported up front), raw and gzipped.
type Weight struct {
	Files       []string
	Bytes, Gzip int
}

// PageWeight measures Weight for h.
func (h *Handler) PageWeight() Weight {
	var w Weight
	for name, a := range h.files {
		switch path.Ext(name) {
		case ".html", ".js", ".css":
		default:
			continue
		}
		w.Files = append(w.Files, name)
		w.Bytes += len(a.body)
		if a.gz != nil {
			w.Gzip += len(a.gz)
		} else {
			w.Gzip += len(a.body)
		}
	}
	sort.Strings(w.Files)
	return w
}

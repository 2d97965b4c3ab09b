package ui

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func newTestHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t *testing.T, h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func checkSecurityHeaders(t *testing.T, target string, w *httptest.ResponseRecorder) {
	t.Helper()
	if got := w.Header().Get("Content-Security-Policy"); got != CSP {
		t.Errorf("%s: Content-Security-Policy %q, want %q", target, got, CSP)
	}
	if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", target, got)
	}
	if got := w.Header().Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("%s: X-Frame-Options %q, want DENY", target, got)
	}
}

// The paths Nomad's UI has (and the CLI prints) answer the application,
// which routes them in the browser; so does any other path below /ui/.
func TestDeepLinksAnswerTheApplication(t *testing.T) {
	h := newTestHandler(t)
	index, err := fs.ReadFile(embedded, "assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/ui/", "/ui/jobs", "/ui/jobs/web@default", "/ui/jobs/a%40b@prod/allocations",
		"/ui/allocations/8a1c2f4e-0000-4000-8000-000000000001", "/ui/clients", "/ui/clients/abc",
		"/ui/servers", "/ui/evaluations", "/ui/no/such/page",
	} {
		w := get(t, h, "GET", target, nil)
		if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), index) {
			t.Errorf("%s: %d, body %d bytes; want 200 with index.html", target, w.Code, w.Body.Len())
		}
		if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", target, ct)
		}
		checkSecurityHeaders(t, target, w)
	}
}

func TestAssetsAreServedWithTheirTypes(t *testing.T) {
	h := newTestHandler(t)
	for target, ctype := range map[string]string{
		"/ui/assets/js/app.js":        "text/javascript; charset=utf-8",
		"/ui/assets/js/pages/jobs.js": "text/javascript; charset=utf-8",
		"/ui/assets/style.css":        "text/css; charset=utf-8",
	} {
		w := get(t, h, "GET", target, nil)
		if w.Code != 200 || w.Header().Get("Content-Type") != ctype {
			t.Errorf("%s: %d %q, want 200 %q", target, w.Code, w.Header().Get("Content-Type"), ctype)
		}
		want, _ := fs.ReadFile(embedded, "assets/"+strings.TrimPrefix(target, assetPrefix))
		if !bytes.Equal(w.Body.Bytes(), want) {
			t.Errorf("%s: body differs from the embedded file", target)
		}
		checkSecurityHeaders(t, target, w)
	}
}

// A missing asset is a 404, not the application: a module that fails to
// load must fail loudly, not run HTML as JavaScript.
func TestAMissingAssetIsNotFound(t *testing.T) {
	h := newTestHandler(t)
	for _, target := range []string{"/ui/assets/js/nope.js", "/ui/assets/../../ui.go", "/ui/assets/", "/ui/assets/js"} {
		w := get(t, h, "GET", target, nil)
		if w.Code != 404 {
			t.Errorf("%s: %d, want 404", target, w.Code)
		}
		checkSecurityHeaders(t, target, w)
	}
}

func TestOnlyGetAndHeadAreAnswered(t *testing.T) {
	h := newTestHandler(t)
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		w := get(t, h, m, "/ui/jobs", nil)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d Allow=%q, want 405 with Allow: GET, HEAD", m, w.Code, w.Header().Get("Allow"))
		}
	}
	w := get(t, h, "HEAD", "/ui/assets/js/app.js", nil)
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
}

func TestGzipIsSentOnlyToBrowsersThatAcceptIt(t *testing.T) {
	h := newTestHandler(t)
	plain := get(t, h, "GET", "/ui/assets/js/app.js", nil)
	cases := []struct {
		accept string
		gzip   bool
	}{
		{"", false},
		{"gzip, deflate, br", true},
		{"br;q=1.0, GZIP;q=0.5", true},
		{"gzip;q=0", false},
		{"*", true},
		{"identity", false},
	}
	for _, c := range cases {
		w := get(t, h, "GET", "/ui/assets/js/app.js", map[string]string{"Accept-Encoding": c.accept})
		if got := w.Header().Get("Content-Encoding") == "gzip"; got != c.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", c.accept, got, c.gzip)
			continue
		}
		if w.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: no Vary: Accept-Encoding", c.accept)
		}
		body := w.Body.Bytes()
		if c.gzip {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			if w.Body.Len() >= len(body) {
				t.Errorf("gzipped app.js is %d bytes, not smaller than %d", w.Body.Len(), len(body))
			}
		}
		if !bytes.Equal(body, plain.Body.Bytes()) {
			t.Errorf("Accept-Encoding %q: decoded body differs from the plain one", c.accept)
		}
	}
}

func TestARevalidationWithTheSameETagIsNotModified(t *testing.T) {
	h := newTestHandler(t)
	w := get(t, h, "GET", "/ui/assets/style.css", nil)
	etag := w.Header().Get("ETag")
	if etag == "" || w.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q Cache-Control %q", etag, w.Header().Get("Cache-Control"))
	}
	if w := get(t, h, "GET", "/ui/assets/style.css", map[string]string{"If-None-Match": `"other", ` + etag}); w.Code != 304 || w.Body.Len() != 0 {
		t.Errorf("same ETag: %d with %d bytes, want 304 without a body", w.Code, w.Body.Len())
	}
	if w := get(t, h, "GET", "/ui/assets/style.css", map[string]string{"If-None-Match": `"other"`}); w.Code != 200 {
		t.Errorf("other ETag: %d, want 200", w.Code)
	}
	if other := get(t, h, "GET", "/ui/assets/js/app.js", nil).Header().Get("ETag"); other == etag {
		t.Errorf("two files share the ETag %s", etag)
	}
}

func TestTheRootRedirectsToTheUI(t *testing.T) {
	w := get(t, http.HandlerFunc(Redirect), "GET", "/", nil)
	if w.Code != http.StatusTemporaryRedirect || w.Header().Get("Location") != "/ui/" {
		t.Errorf("/: %d Location %q, want 307 to /ui/", w.Code, w.Header().Get("Location"))
	}
}

var (
	importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'`)
	srcRE    = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
)

// The module graph is whole: every file index.html names and every
// module a module imports is embedded, so no page fails to load in a
// browser for a typo that `go build` cannot see.
func TestEveryReferencedFileIsEmbedded(t *testing.T) {
	h := newTestHandler(t)
	index := string(h.index.body)
	refs := srcRE.FindAllStringSubmatch(index, -1)
	if len(refs) < 2 {
		t.Fatalf("index.html references %d files; want the stylesheet and app.js", len(refs))
	}
	for _, m := range refs {
		ref := m[1]
		if strings.HasPrefix(ref, "data:") {
			continue
		}
		if !strings.HasPrefix(ref, "/ui/") {
			t.Errorf("index.html references %q, outside the UI", ref)
			continue
		}
		if rest, ok := strings.CutPrefix(ref, assetPrefix); ok && h.files[rest] == nil {
			t.Errorf("index.html references %q, which is not embedded", ref)
		}
	}
	imports := 0
	for name, a := range h.files {
		if path.Ext(name) != ".js" {
			continue
		}
		for _, m := range importRE.FindAllStringSubmatch(string(a.body), -1) {
			imports++
			target := path.Join(path.Dir(name), m[1])
			if !strings.HasPrefix(m[1], ".") || h.files[target] == nil {
				t.Errorf("%s imports %q, which is not an embedded module", name, m[1])
			}
		}
	}
	if imports < 20 {
		t.Errorf("found only %d imports; the import pattern is broken", imports)
	}
}

// The CSP allows no inline code and no other origin; the files keep to
// it, and they build the page without innerHTML, so what the API says is
// shown as text and never parsed as markup.
func TestTheAssetsKeepToTheirPolicy(t *testing.T) {
	h := newTestHandler(t)
	index := string(h.index.body)
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(index) || strings.Contains(index, "<style") || strings.Contains(index, " style=") {
		t.Error("index.html has inline script or style, which the CSP blocks")
	}
	for name, a := range h.files {
		body := string(a.body)
		for _, bad := range []string{"http://", "https://", "innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

// The first load is index.html, the stylesheet and every module (app.js
// imports all the pages up front). This test reports the weight and
// keeps it small.
func TestPageWeight(t *testing.T) {
	w := newTestHandler(t).PageWeight()
	t.Logf("first load: %d files, %d bytes, %d gzipped", len(w.Files), w.Bytes, w.Gzip)
	if w.Gzip >= w.Bytes {
		t.Errorf("gzipped %d bytes is not below %d", w.Gzip, w.Bytes)
	}
	if w.Bytes > 200<<10 || w.Gzip > 60<<10 {
		t.Errorf("the first load is %d bytes (%d gzipped); keep it under 200 KiB (60 KiB gzipped)", w.Bytes, w.Gzip)
	}
}

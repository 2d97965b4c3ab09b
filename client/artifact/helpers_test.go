package artifact

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/structs"
)

// fixture is one task's alloc dir and a web server with files to fetch.
type fixture struct {
	t     *testing.T
	alloc *allocdir.AllocDir
	task  allocdir.TaskDir
	srv   *httptest.Server
	files map[string][]byte

	mu       sync.Mutex
	requests []*http.Request
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, files: map[string][]byte{}}
	f.alloc = allocdir.New(t.TempDir(), "a1")
	if err := f.alloc.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	f.task = f.alloc.Task("web")
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Clone(context.Background()))
	body, ok := f.files[r.URL.Path]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(body)
}

func (f *fixture) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// url serves body at path and returns its address.
func (f *fixture) url(path string, body []byte) string {
	f.mu.Lock()
	f.files[path] = body
	f.mu.Unlock()
	return f.srv.URL + path
}

// fetch fetches a for the fixture's task. The test servers listen on
// loopback, which a Fetcher refuses by default, so a Fetcher that allows
// no host is given 127.0.0.1; refusal tests use fetchAs.
func (f *fixture) fetch(fe *Fetcher, a *structs.TaskArtifact, env Replacer) error {
	if fe == nil {
		fe = &Fetcher{}
	}
	c := *fe
	if c.Sources.AllowedHosts == nil {
		c.Sources.AllowedHosts = []HostRule{mustRule(f.t, "127.0.0.1")}
	}
	return c.Fetch(context.Background(), Request{Artifact: a, Env: env, AllocDir: f.alloc, TaskDir: f.task.Dir})
}

// fetchAs fetches a with fe exactly as given.
func (f *fixture) fetchAs(fe *Fetcher, a *structs.TaskArtifact) error {
	return fe.Fetch(context.Background(), Request{Artifact: a, AllocDir: f.alloc, TaskDir: f.task.Dir})
}

func mustRule(t *testing.T, s string) HostRule {
	t.Helper()
	r, err := ParseHostRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// read returns a file of the task dir.
func (f *fixture) read(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.task.Dir, rel))
	if err != nil {
		f.t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

// localEntries lists the task's local/ dir (for "nothing was written").
func (f *fixture) localEntries() []string {
	f.t.Helper()
	es, err := os.ReadDir(f.task.LocalDir)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

type mapEnv map[string]string

func (m mapEnv) ReplaceEnv(s string) string {
	for k, v := range m {
		s = replaceAll(s, "${"+k+"}", v)
	}
	return s
}

func replaceAll(s, old, new string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte(old), []byte(new)))
}

// entry is one member of a test archive.
type entry struct {
	name, body, link string
	mode             int64
	dir, symlink     bool
}

func tarGz(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		switch {
		case e.dir:
			h.Typeflag, h.Size, h.Mode = tar.TypeDir, 0, 0o755
		case e.symlink:
			h.Typeflag, h.Size, h.Linkname = tar.TypeSymlink, 0, e.link
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := os.FileMode(0o644)
		if e.mode != 0 {
			mode = os.FileMode(e.mode)
		}
		body := e.body
		if e.symlink {
			mode |= os.ModeSymlink
			body = e.link
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

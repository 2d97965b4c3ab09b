package artifact

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/structs"
)

func TestAPlainFileLandsInLocalUnderItsName(t *testing.T) {
	f := newFixture(t)
	src := f.url("/bin/hello.sh", []byte("echo hi\n"))
	if err := f.fetch(nil, &structs.TaskArtifact{GetterSource: src, RelativeDest: "local/"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read("local/hello.sh"); got != "echo hi\n" {
		t.Fatalf("local/hello.sh = %q", got)
	}
	// Staging leaves nothing behind.
	es, _ := os.ReadDir(f.task.Dir)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".artifact-") {
			t.Fatalf("staging dir %s left in the task dir", e.Name())
		}
	}
}

func TestFileModeWritesTheDestinationPathItself(t *testing.T) {
	f := newFixture(t)
	src := f.url("/dl/v1.2/tool", []byte("binary"))
	a := &structs.TaskArtifact{GetterSource: src, GetterMode: ModeFile, RelativeDest: "local/bin/mytool"}
	if err := f.fetch(nil, a, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read("local/bin/mytool"); got != "binary" {
		t.Fatalf("local/bin/mytool = %q", got)
	}
	// With no destination, file mode defaults to local/<name>.
	a = &structs.TaskArtifact{GetterSource: src, GetterMode: ModeFile}
	if err := f.fetch(nil, a, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read("local/tool"); got != "binary" {
		t.Fatalf("local/tool = %q", got)
	}
}

func TestHeadersSourceAndDestinationAreInterpolated(t *testing.T) {
	f := newFixture(t)
	f.url("/v7/app.txt", []byte("app"))
	env := mapEnv{"VERSION": "v7", "TOKEN": "s3cret", "NOMAD_TASK_DIR": f.task.LocalDir}
	a := &structs.TaskArtifact{
		GetterSource:  f.srv.URL + "/${VERSION}/app.txt",
		GetterHeaders: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Plain": "yes"},
		RelativeDest:  "${NOMAD_TASK_DIR}/conf",
	}
	if err := f.fetch(nil, a, env); err != nil {
		t.Fatal(err)
	}
	if got := f.read("local/conf/app.txt"); got != "app" {
		t.Fatalf("local/conf/app.txt = %q", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 1 {
		t.Fatalf("%d requests, want 1 (no HEAD first)", len(f.requests))
	}
	r := f.requests[0]
	if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Plain") != "yes" {
		t.Fatalf("request %s with headers %v", r.Method, r.Header)
	}
}

func TestChecksumIsVerified(t *testing.T) {
	body := []byte("payload v1\n")
	sum := sha256.Sum256(body)
	good := "sha256:" + hex.EncodeToString(sum[:])
	bad := "sha256:" + strings.Repeat("ab", 32)
	md := md5.Sum(body)

	t.Run("a matching sum passes", func(t *testing.T) {
		f := newFixture(t)
		for _, c := range []string{good, "md5:" + hex.EncodeToString(md[:])} {
			a := &structs.TaskArtifact{GetterSource: f.url("/p.txt", body), GetterOptions: map[string]string{"checksum": c}}
			if err := f.fetch(nil, a, nil); err != nil {
				t.Fatalf("checksum %s: %v", c, err)
			}
		}
		if f.read("local/p.txt") != string(body) {
			t.Fatal("file not written")
		}
	})
	t.Run("a mismatch fails with both sums and is final", func(t *testing.T) {
		f := newFixture(t)
		a := &structs.TaskArtifact{GetterSource: f.url("/p.txt", body), GetterOptions: map[string]string{"checksum": bad}}
		err := f.fetch(nil, a, nil)
		if !errors.Is(err, ErrChecksumMismatch) || IsRecoverable(err) {
			t.Fatalf("err = %v, recoverable %v", err, IsRecoverable(err))
		}
		for _, want := range []string{bad, good} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%q does not name %s", err, want)
			}
		}
		if es := f.localEntries(); len(es) != 0 {
			t.Fatalf("local/ holds %v after a mismatch", es)
		}
	})
	t.Run("a malformed checksum is final and fetches nothing", func(t *testing.T) {
		f := newFixture(t)
		for _, c := range []string{"abc", "crc32:00ff00ff", "sha256:xyz", "md5:" + hex.EncodeToString(sum[:])} {
			a := &structs.TaskArtifact{GetterSource: f.url("/p.txt", body), GetterOptions: map[string]string{"checksum": c}}
			err := f.fetch(nil, a, nil)
			if !errors.Is(err, ErrInvalidOption) || IsRecoverable(err) || !strings.Contains(err.Error(), "checksum") {
				t.Fatalf("checksum %q: err = %v", c, err)
			}
		}
		if n := f.requestCount(); n != 0 {
			t.Fatalf("%d requests made for invalid checksums", n)
		}
	})
}

func TestArchivesAreUnpackedIntoTheDestination(t *testing.T) {
	entries := []entry{
		{name: "app/", dir: true},
		{name: "app/run.sh", body: "#!/bin/sh\necho run\n", mode: 0o755},
		{name: "app/lib/libx.so.1", body: "lib"},
		{name: "app/lib/libx.so", symlink: true, link: "libx.so.1"},
	}
	for name, body := range map[string][]byte{
		"/release.tar.gz": tarGz(t, entries...),
		"/release.tgz":    tarGz(t, entries...),
		"/release.zip":    zipOf(t, entries...),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if err := f.fetch(nil, &structs.TaskArtifact{GetterSource: f.url(name, body)}, nil); err != nil {
				t.Fatal(err)
			}
			if got := f.read("local/app/run.sh"); !strings.Contains(got, "echo run") {
				t.Fatalf("run.sh = %q", got)
			}
			fi, err := os.Stat(filepath.Join(f.task.LocalDir, "app/run.sh"))
			if err != nil || fi.Mode().Perm() != 0o755 {
				t.Fatalf("run.sh mode %v, %v; want 0755 kept", fi.Mode(), err)
			}
			if got := f.read("local/app/lib/libx.so"); got != "lib" {
				t.Fatalf("symlink inside the archive reads %q", got)
			}
			if target, err := os.Readlink(filepath.Join(f.task.LocalDir, "app/lib/libx.so")); err != nil || target != "libx.so.1" {
				t.Fatalf("libx.so is not a symlink to libx.so.1: %q %v", target, err)
			}
			if _, err := os.Stat(filepath.Join(f.task.LocalDir, filepath.Base(name))); err == nil {
				t.Fatal("the archive itself was kept")
			}
		})
	}
}

func TestArchiveFalseKeepsTheArchive(t *testing.T) {
	f := newFixture(t)
	body := tarGz(t, entry{name: "x.txt", body: "x"})
	a := &structs.TaskArtifact{GetterSource: f.url("/r.tar.gz", body), GetterOptions: map[string]string{"archive": "false"}}
	if err := f.fetch(nil, a, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read("local/r.tar.gz"); got != string(body) {
		t.Fatal("local/r.tar.gz is not the archive as served")
	}
	if _, err := os.Stat(filepath.Join(f.task.LocalDir, "x.txt")); err == nil {
		t.Fatal("archive = false still unpacked")
	}
}

func TestAGzippedFileInFileModeIsDecompressedToTheDestination(t *testing.T) {
	f := newFixture(t)
	body := gzipBytes(t, "plain text\n")
	a := &structs.TaskArtifact{GetterSource: f.url("/notes.txt.gz", body), GetterMode: ModeFile, RelativeDest: "local/notes.txt"}
	if err := f.fetch(nil, a, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read("local/notes.txt"); got != "plain text\n" {
		t.Fatalf("local/notes.txt = %q", got)
	}
}

func TestArchivesThatLeadOutsideAreRefused(t *testing.T) {
	cases := map[string][]byte{
		"/dotdot.tar.gz":   tarGz(t, entry{name: "ok.txt", body: "ok"}, entry{name: "../../evil.txt", body: "evil"}),
		"/dotdot.zip":      zipOf(t, entry{name: "ok.txt", body: "ok"}, entry{name: "../../evil.txt", body: "evil"}),
		"/abs-link.tar.gz": tarGz(t, entry{name: "passwd", symlink: true, link: "/etc/passwd"}),
		"/rel-link.tar.gz": tarGz(t, entry{name: "up", symlink: true, link: "../../.."}),
		"/rel-link.zip":    zipOf(t, entry{name: "up", symlink: true, link: "../.."}),
		// Lexically "here/.." is the destination itself; through the
		// link "here" (the destination) it is the destination's parent.
		"/through-link.tar.gz": tarGz(t,
			entry{name: "here", symlink: true, link: "."},
			entry{name: "out", symlink: true, link: "here/.."}),
		"/write-through.tar.gz": tarGz(t,
			entry{name: "here", symlink: true, link: "."},
			entry{name: "up", symlink: true, link: "here/.."},
			entry{name: "up/evil.txt", body: "evil"}),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			err := f.fetch(nil, &structs.TaskArtifact{GetterSource: f.url(name, body)}, nil)
			if !errors.Is(err, ErrUnsafeArchive) {
				t.Fatalf("err = %v, want ErrUnsafeArchive", err)
			}
			if es := f.localEntries(); len(es) != 0 {
				t.Fatalf("local/ holds %v after a refused archive", es)
			}
			for _, p := range []string{filepath.Join(f.task.Dir, "evil.txt"), filepath.Join(f.alloc.Root, "evil.txt")} {
				if _, err := os.Lstat(p); err == nil {
					t.Fatalf("%s was written", p)
				}
			}
		})
	}
}

func TestUnsupportedSourcesAreRefusedByName(t *testing.T) {
	for _, src := range []string{
		"git::https://github.com/hashicorp/example.git",
		"github.com/hashicorp/example",
		"git@github.com:hashicorp/example.git",
		"s3::https://s3.amazonaws.com/bucket/foo",
		"my-bucket.s3.amazonaws.com/foo.tgz",
		"gcs::https://www.googleapis.com/storage/v1/bucket/foo",
		"hg::http://example.com/repo",
		"ssh://git@example.com/repo.git",
		"relative/path.tgz",
	} {
		f := newFixture(t)
		err := f.fetch(nil, &structs.TaskArtifact{GetterSource: src}, nil)
		if !errors.Is(err, ErrUnsupportedSource) || IsRecoverable(err) {
			t.Fatalf("%s: err = %v, recoverable %v", src, err, IsRecoverable(err))
		}
		for _, want := range []string{src, "http:// and https://", "file://"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %q does not say %q", src, err, want)
			}
		}
	}
}

func TestLocalFilesAreCopied(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "conf.ini")
	if err := os.WriteFile(p, []byte("[a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	allowed := &Fetcher{Sources: Sources{LocalPaths: []string{dir}}}
	for i, src := range []string{p, "file://" + p} {
		dest := fmt.Sprintf("local/c%d", i)
		if err := f.fetch(allowed, &structs.TaskArtifact{GetterSource: src, RelativeDest: dest}, nil); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		full := filepath.Join(f.task.Dir, dest, "conf.ini")
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: %s is not a copied file: %v %v", src, full, fi, err)
		}
	}
	// Bounded like a download.
	err := f.fetch(&Fetcher{MaxDownloadBytes: 2, Sources: allowed.Sources}, &structs.TaskArtifact{GetterSource: p}, nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestDownloadsAreSizeBounded(t *testing.T) {
	big := []byte(strings.Repeat("x", 2048))
	fe := &Fetcher{MaxDownloadBytes: 1024}
	t.Run("with a content length", func(t *testing.T) {
		f := newFixture(t)
		err := f.fetch(fe, &structs.TaskArtifact{GetterSource: f.url("/big.bin", big)}, nil)
		if !errors.Is(err, ErrTooLarge) || !IsRecoverable(err) {
			t.Fatalf("err = %v", err)
		}
		if es := f.localEntries(); len(es) != 0 {
			t.Fatalf("local/ holds %v", es)
		}
	})
	t.Run("streamed without one", func(t *testing.T) {
		f := newFixture(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for range 4 {
				_, _ = w.Write(big[:512])
				w.(http.Flusher).Flush() // chunked: no Content-Length
			}
		}))
		defer srv.Close()
		err := f.fetch(fe, &structs.TaskArtifact{GetterSource: srv.URL + "/big.bin"}, nil)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v", err)
		}
		if es := f.localEntries(); len(es) != 0 {
			t.Fatalf("local/ holds %v: a truncated file was kept", es)
		}
	})
	t.Run("exactly at the bound passes", func(t *testing.T) {
		f := newFixture(t)
		if err := f.fetch(fe, &structs.TaskArtifact{GetterSource: f.url("/ok.bin", big[:1024])}, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unpacked size and entry count", func(t *testing.T) {
		f := newFixture(t)
		bomb := tarGz(t, entry{name: "a", body: string(big)})
		err := f.fetch(&Fetcher{MaxUnpackedBytes: 1024}, &structs.TaskArtifact{GetterSource: f.url("/bomb.tgz", bomb)}, nil)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("size: err = %v", err)
		}
		many := tarGz(t, entry{name: "1", body: "1"}, entry{name: "2", body: "2"}, entry{name: "3", body: "3"})
		err = f.fetch(&Fetcher{MaxArchiveFiles: 2}, &structs.TaskArtifact{GetterSource: f.url("/many.tgz", many)}, nil)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("count: err = %v", err)
		}
	})
}

func TestHTTPFailuresAreRecoverable(t *testing.T) {
	f := newFixture(t)
	err := f.fetch(nil, &structs.TaskArtifact{GetterSource: f.srv.URL + "/missing.txt"}, nil)
	if err == nil || !IsRecoverable(err) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v", err)
	}
}

func TestATimeoutEndsAStalledDownload(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	err := f.fetch(&Fetcher{Timeout: 50 * time.Millisecond}, &structs.TaskArtifact{GetterSource: srv.URL + "/slow"}, nil)
	if err == nil || !IsRecoverable(err) || !strings.Contains(err.Error(), "took longer than 50ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestInsecureSkipsTLSVerificationOnlyWhenAsked(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("tls"))
	}))
	defer srv.Close()
	err := f.fetch(nil, &structs.TaskArtifact{GetterSource: srv.URL + "/s.txt"}, nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("self-signed server accepted without insecure: %v", err)
	}
	if err := f.fetch(nil, &structs.TaskArtifact{GetterSource: srv.URL + "/s.txt", GetterInsecure: true}, nil); err != nil {
		t.Fatal(err)
	}
	if f.read("local/s.txt") != "tls" {
		t.Fatal("not written")
	}
}

func TestDestinationsOutsideTheAllocDirAreRefused(t *testing.T) {
	f := newFixture(t)
	src := f.url("/a.txt", []byte("a"))
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.task.LocalDir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{"../../elsewhere", "/etc/drover-test", "local/out/x"} {
		err := f.fetch(nil, &structs.TaskArtifact{GetterSource: src, RelativeDest: dest}, nil)
		if !errors.Is(err, allocdir.ErrPathEscapes) || IsRecoverable(err) {
			t.Fatalf("%s: err = %v", dest, err)
		}
	}
	if n := f.requestCount(); n != 0 {
		t.Fatalf("%d requests for refused destinations", n)
	}
	// The shared alloc dir is inside: fine, as in Nomad.
	if err := f.fetch(nil, &structs.TaskArtifact{GetterSource: src, RelativeDest: "../alloc/data"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(f.alloc.SharedDir, "data", "a.txt")); err != nil || string(b) != "a" {
		t.Fatalf("alloc/data/a.txt: %q %v", b, err)
	}
}

func TestAnInvalidModeIsFinal(t *testing.T) {
	f := newFixture(t)
	err := f.fetch(nil, &structs.TaskArtifact{GetterSource: f.url("/a", []byte("a")), GetterMode: "folder"}, nil)
	if !errors.Is(err, ErrInvalidOption) || IsRecoverable(err) || !strings.Contains(err.Error(), `"folder"`) {
		t.Fatalf("err = %v", err)
	}
}

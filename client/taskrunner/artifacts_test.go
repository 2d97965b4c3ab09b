package taskrunner

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// artifactServer serves files and counts the requests for each path.
type artifactServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func newArtifactServer(t *testing.T, files map[string][]byte) *artifactServer {
	s := &artifactServer{files: files, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.files[r.URL.Path]
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *artifactServer) set(path string, body []byte) {
	s.mu.Lock()
	s.files[path] = body
	s.mu.Unlock()
}

func (s *artifactServer) hitCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// scriptTarball is a .tar.gz with an executable script at bin/run.sh.
func scriptTarball(t *testing.T, script string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "bin/run.sh", Mode: 0o755, Size: int64(len(script)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(script)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRawExecTaskRunsTheScriptItDownloaded(t *testing.T) {
	srv := newArtifactServer(t, map[string][]byte{
		"/v1/app.tar.gz": scriptTarball(t, "#!/bin/sh\necho \"ran from $NOMAD_TASK_DIR\" > \"$NOMAD_ALLOC_DIR/data/out\"\n"),
		"/v1/conf.txt":   []byte("greeting=hi\n"),
	})
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	task := &structs.Task{Name: "web", Driver: "raw_exec", KillTimeout: 3 * time.Second,
		Meta:   map[string]string{"version": "v1"},
		Config: map[string]any{"command": "local/bin/run.sh"},
		Artifacts: []*structs.TaskArtifact{
			{GetterSource: srv.URL + "/${NOMAD_META_version}/app.tar.gz", RelativeDest: "local/"},
			{GetterSource: srv.URL + "/v1/conf.txt", GetterMode: "file", RelativeDest: "${NOMAD_TASK_DIR}/etc/app.conf"},
		},
		LogConfig: &structs.LogConfig{MaxFiles: 1, MaxFileSizeMB: 1}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	s := h.tr.TaskState()
	if s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	out, err := os.ReadFile(filepath.Join(h.dir.SharedDir, "data", "out"))
	if err != nil || string(out) != "ran from "+h.dir.Task("web").LocalDir+"\n" {
		t.Fatalf("the downloaded script did not run: %q %v", out, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.dir.Task("web").LocalDir, "etc", "app.conf")); err != nil || string(b) != "greeting=hi\n" {
		t.Fatalf("app.conf = %q, %v", b, err)
	}
	want := []string{structs.TaskReceived, structs.TaskSetup, structs.TaskDownloadingArtifacts, structs.TaskStarted, structs.TaskTerminated}
	if got := eventTypes(s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestArtifactsAreFetchedOncePerAlloc(t *testing.T) {
	srv := newArtifactServer(t, map[string][]byte{"/a.txt": []byte("a")})
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "exit_code": 1},
		Artifacts:     []*structs.TaskArtifact{{GetterSource: srv.URL + "/a.txt"}},
		RestartPolicy: &structs.RestartPolicy{Attempts: 2, Interval: 10 * time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitForWhile(t, "task to fail", h.dead, func() { clk.Advance(time.Second) })
	if drv.Starts() != 3 {
		t.Fatalf("starts = %d, want 3", drv.Starts())
	}
	if n := srv.hitCount("/a.txt"); n != 1 {
		t.Fatalf("artifact fetched %d times over 3 starts, want once", n)
	}
	downloads := 0
	for _, e := range h.tr.TaskState().Events {
		if e.Type == structs.TaskDownloadingArtifacts {
			downloads++
		}
	}
	if downloads > 1 {
		t.Fatalf("%d Downloading Artifacts events, want 1", downloads)
	}
}

func TestAFailedDownloadIsARecoverableFailedStart(t *testing.T) {
	srv := newArtifactServer(t, map[string][]byte{})
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		Artifacts:     []*structs.TaskArtifact{{GetterSource: srv.URL + "/late.txt"}},
		RestartPolicy: &structs.RestartPolicy{Attempts: 3, Interval: 10 * time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "a restart after the failed download", func() bool { return h.tr.TaskState().Restarts >= 1 })
	var failed *structs.TaskEvent
	for _, e := range h.tr.TaskState().Events {
		if e.Type == structs.TaskArtifactDownloadFailed {
			failed = e
		}
	}
	if failed == nil || !strings.Contains(failed.DownloadError(), "late.txt") || !strings.Contains(failed.DownloadError(), "404") {
		t.Fatalf("want a Failed Artifact Download event naming the source and the 404, got %+v", failed)
	}
	if drv.Starts() != 0 {
		t.Fatal("the task started without its artifact")
	}
	// The file appears upstream: the next attempt fetches it and starts.
	srv.set("/late.txt", []byte("here now"))
	testutil.WaitForWhile(t, "task to finish", h.dead, func() { clk.Advance(time.Second) })
	if s := h.tr.TaskState(); s.Failed || drv.Starts() != 1 {
		t.Fatalf("failed=%v starts=%d events %v", s.Failed, drv.Starts(), eventTypes(s))
	}
}

func TestAnUnsupportedSourceFailsTheTaskWithoutRetrying(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		Artifacts:     []*structs.TaskArtifact{{GetterSource: "git::https://example.com/repo.git"}},
		RestartPolicy: &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to fail", h.dead)
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 0 || drv.Starts() != 0 {
		t.Fatalf("failed=%v restarts=%d starts=%d", s.Failed, s.Restarts, drv.Starts())
	}
	types := eventTypes(s)
	if types[len(types)-2] != structs.TaskArtifactDownloadFailed || types[len(types)-1] != structs.TaskNotRestarting {
		t.Fatalf("events %v", types)
	}
	if msg := s.Events[len(s.Events)-2].DownloadError(); !strings.Contains(msg, "git::https://example.com/repo.git") || !strings.Contains(msg, "http://") {
		t.Fatalf("download error %q", msg)
	}
}

func TestATemplateCanRenderAFileAnArtifactBrought(t *testing.T) {
	srv := newArtifactServer(t, map[string][]byte{"/app.tpl": []byte(`name={{ env "NOMAD_TASK_NAME" }}`)})
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		// Artifacts are fetched before templates render, as in Nomad.
		Artifacts: []*structs.TaskArtifact{{GetterSource: srv.URL + "/app.tpl", RelativeDest: "local/"}},
		Templates: []*structs.Template{{SourcePath: "local/app.tpl", DestPath: "local/app.conf", ChangeMode: "noop"}}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitForWhile(t, "task to finish", h.dead, func() { clk.Advance(time.Second) })
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %v", eventTypes(s))
	}
	b, err := os.ReadFile(filepath.Join(h.dir.Task("t").LocalDir, "app.conf"))
	if err != nil || string(b) != "name=t" {
		t.Fatalf("app.conf = %q, %v", b, err)
	}
}

package template

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/structs"
)

// The attacks that moved rendering out of the client's process: a
// template that never ends, and one that doubles a string until the
// client runs out of memory. Both cost the client agent nothing now.
const (
	spinningTemplate = `{{ range 1000000000000 }}{{ end }}`
	loopingTemplate  = `{{ range loop 1000000000000 }}{{ end }}`
	growingTemplate  = `{{ $x := "xxxxxxxxxxxxxxxx" }}{{ range $i := loop 31 }}{{ $x = print $x $x }}{{ end }}{{ len $x }}`
)

func TestARendererRendersAsRenderDoes(t *testing.T) {
	in, root := allocTree(t)
	in.Templates = []*structs.Template{
		{EmbeddedTmpl: "alloc={{ env \"NOMAD_ALLOC_ID\" }} at={{ timestamp }} file={{ file \"local/in.txt\" }}", DestPath: "${NOMAD_TASK_DIR}/app.conf", Perms: "0600"},
		{EmbeddedTmpl: "APP_PORT={{ env \"NOMAD_PORT_http\" }}\n", DestPath: "secrets/app.env", Envvars: true},
		{SourcePath: "local/src.tpl", DestPath: "local/from-source"},
	}
	must(t, os.WriteFile(filepath.Join(root, "web/local/in.txt"), []byte("read in the child"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "web/local/src.tpl"), []byte(`{{ "source" | toUpper }}`), 0o644))

	vars, err := NewRenderer(RendererConfig{}).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vars) != 1 || vars["APP_PORT"] != "23456" {
		t.Fatalf("vars %v", vars)
	}
	want := "alloc=8f2a4c1e-0000-4000-8000-000000000001 at=2024-05-06T07:08:07Z file=read in the child"
	if got := readFile(t, filepath.Join(root, "web/local/app.conf")); got != want {
		t.Fatalf("app.conf %q, want %q", got, want)
	}
	if fi, err := os.Stat(filepath.Join(root, "web/local/app.conf")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("app.conf %v %v", fi, err)
	}
	if got := readFile(t, filepath.Join(root, "web/local/from-source")); got != "SOURCE" {
		t.Fatalf("from-source %q", got)
	}
}

// The child renders under the same sandbox: a path that escapes is
// refused there, reported as in process.
func TestARendererKeepsTheSandbox(t *testing.T) {
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644))
	for _, tc := range []struct {
		name  string
		tmpl  structs.Template
		setup func(root string)
	}{
		{name: "a destination up and out", tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "../../escaped"}},
		{name: "a source through a symlink", tmpl: structs.Template{SourcePath: "local/link", DestPath: "local/x"},
			setup: func(root string) {
				must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "web/local/link")))
			}},
		{name: "a destination directory that is a symlink out", tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "local/out/app.conf"},
			setup: func(root string) { must(t, os.Symlink(outside, filepath.Join(root, "web/local/out"))) }},
		{name: "file() through a symlink", tmpl: structs.Template{EmbeddedTmpl: `{{ file "local/link" }}`, DestPath: "local/x"},
			setup: func(root string) {
				must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "web/local/link")))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, root := allocTree(t)
			if tc.setup != nil {
				tc.setup(root)
			}
			tm := tc.tmpl
			in.Templates = []*structs.Template{{EmbeddedTmpl: "fine", DestPath: "local/first"}, &tm}
			_, err := NewRenderer(RendererConfig{}).Render(context.Background(), in)
			var te *Error
			if !errors.Is(err, ErrPathEscapes) || !errors.As(err, &te) || te.Index != 1 || te.Destination != tm.DestPath {
				t.Fatalf("error %v, want ErrPathEscapes naming template 1", err)
			}
			if _, err := os.Stat(filepath.Join(outside, "app.conf")); err == nil {
				t.Fatal("a file was written outside the alloc dir")
			}
		})
	}
}

func TestARendererReportsATemplateThatFails(t *testing.T) {
	in, _ := allocTree(t)
	in.Templates = []*structs.Template{
		{EmbeddedTmpl: "ok", DestPath: "local/ok"},
		{EmbeddedTmpl: `{{ key "app/db" }}`, DestPath: "local/app.conf"},
	}
	_, err := NewRenderer(RendererConfig{}).Render(context.Background(), in)
	var te *Error
	if !errors.As(err, &te) || te.Index != 1 || te.Destination != "local/app.conf" || !strings.Contains(err.Error(), "reads from Consul") {
		t.Fatalf("error %v", err)
	}
}

// A template that never ends is stopped at the time limit, named, and
// blamed on the template that was rendering; the client's heap does not
// grow for a template that would take gigabytes.
func TestARendererStopsTemplatesAtItsLimits(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		limit      childproc.Limit
		want       string
		// timeout is the render's time limit: 1s where time is the limit
		// under test, long enough elsewhere that a loaded machine never
		// reaches it before the limit under test.
		timeout time.Duration
	}{
		{"a range over a huge number", spinningTemplate, childproc.LimitWall, "rendering took longer than 1s, the time limit for a task's templates", time.Second},
		{"a loop over a huge number", loopingTemplate, childproc.LimitWall, "rendering took longer than 1s", time.Second},
		{"a string doubled in a loop", growingTemplate, childproc.LimitHeap, "rendering needed more than 32 MiB of memory, the limit for a task's templates", 9 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := allocTree(t)
			in.Templates = []*structs.Template{{EmbeddedTmpl: "ok", DestPath: "local/ok"}, {EmbeddedTmpl: tc.data, DestPath: "local/bomb"}}
			r := NewRenderer(RendererConfig{Memory: 32 << 20, Timeout: tc.timeout})
			before := totalAlloc()
			start := time.Now()
			_, err := r.Render(context.Background(), in)
			took := time.Since(start)
			var (
				te *Error
				le *childproc.LimitError
			)
			if !errors.As(err, &te) || te.Index != 1 || !errors.As(err, &le) || le.Limit != tc.limit || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want template 1 stopped by the %s limit", err, tc.limit)
			}
			if took > 10*time.Second {
				t.Fatalf("stopping it took %v", took)
			}
			if grew := totalAlloc() - before; grew > 8<<20 {
				t.Fatalf("the client allocated %d MiB for it", grew>>20)
			}
		})
	}
}

// Cancelling a render (the task was killed) kills the child at once.
func TestCancellingARenderStopsItAtOnce(t *testing.T) {
	in, _ := allocTree(t)
	in.Templates = []*structs.Template{{EmbeddedTmpl: spinningTemplate, DestPath: "local/bomb"}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := NewRenderer(RendererConfig{}).Render(ctx, in)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the render ran %v past a 300ms context", took)
	}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// BenchmarkRenderInChild and BenchmarkRenderInProcess measure what the
// child costs a task start with three templates.
func BenchmarkRenderInChild(b *testing.B) {
	r := NewRenderer(RendererConfig{})
	benchmarkRender(b, func(in Input) error { _, err := r.Render(context.Background(), in); return err })
}

func BenchmarkRenderInProcess(b *testing.B) {
	benchmarkRender(b, func(in Input) error { _, err := Render(in); return err })
}

func benchmarkRender(b *testing.B, render func(Input) error) {
	root := b.TempDir()
	for _, d := range []string{"alloc", "web/local"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	in := Input{
		TaskDir: filepath.Join(root, "web"), SharedDir: filepath.Join(root, "alloc"),
		Env: map[string]string{"NOMAD_PORT_http": "23456", "NOMAD_ALLOC_ID": "a"},
		Templates: []*structs.Template{
			{EmbeddedTmpl: "listen = {{ env \"NOMAD_PORT_http\" }}\nat = {{ timestamp }}\n", DestPath: "local/app.conf"},
			{EmbeddedTmpl: "{{ range $i := loop 50 }}line {{ $i }}\n{{ end }}", DestPath: "local/lines"},
			{EmbeddedTmpl: "PORT={{ env \"NOMAD_PORT_http\" }}\n", DestPath: "local/app.env", Envvars: true},
		},
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := render(in); err != nil {
			b.Fatal(err)
		}
	}
}

// A template that recurses without end overflows the child's stack (its
// bound is half the memory limit): the child dies, the client does not,
// and the error says why.
func TestATemplateThatCrashesTheChildIsReported(t *testing.T) {
	in, _ := allocTree(t)
	in.Templates = []*structs.Template{{EmbeddedTmpl: `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`, DestPath: "local/deep"}}
	_, err := NewRenderer(RendererConfig{Memory: 16 << 20}).Render(context.Background(), in)
	var te *Error
	if !errors.As(err, &te) || te.Index != 0 || !strings.Contains(err.Error(), "the render process ended without an answer") || !strings.Contains(err.Error(), "stack") {
		t.Fatalf("error %v", err)
	}
}

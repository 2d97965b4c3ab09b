package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestDelimitersAreHonoured(t *testing.T) {
	in, root := allocTree(t)
	in.Templates = []*structs.Template{{
		EmbeddedTmpl: `port=[[ env "NOMAD_PORT_http" ]] literal={{ not a template }}`,
		DestPath:     "local/app.conf", LeftDelim: "[[", RightDelim: "]]",
	}}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "web/local/app.conf")); got != "port=23456 literal={{ not a template }}" {
		t.Fatalf("rendered %q", got)
	}
}

func TestErrorOnMissingKeyFailsTheRender(t *testing.T) {
	in, _ := allocTree(t)
	in.Templates = []*structs.Template{{EmbeddedTmpl: `{{ $m := parseJSON "{}" }}{{ $m.nope }}`, DestPath: "local/x", ErrMissingKey: true}}
	_, err := Render(in)
	if err == nil || !strings.Contains(err.Error(), `map has no entry for key "nope"`) {
		t.Fatalf("error %v", err)
	}
}

func TestSourceIsReadFromTheTaskDirectory(t *testing.T) {
	in, root := allocTree(t)
	if err := os.WriteFile(filepath.Join(root, "web/local/app.tpl"), []byte(`alloc={{ env "NOMAD_ALLOC_ID" }}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "alloc/shared.tpl"), []byte(`shared`), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Templates = []*structs.Template{
		{SourcePath: "local/app.tpl", DestPath: "local/app.conf"},
		{SourcePath: "${NOMAD_ALLOC_DIR}/shared.tpl", DestPath: "${NOMAD_SECRETS_DIR}/shared.conf"},
	}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "web/local/app.conf")); got != "alloc=8f2a4c1e-0000-4000-8000-000000000001" {
		t.Fatalf("rendered %q", got)
	}
	if got := readFile(t, filepath.Join(root, "web/secrets/shared.conf")); got != "shared" {
		t.Fatalf("rendered %q", got)
	}
}

func TestDestinationsStayInTheTaskDirectory(t *testing.T) {
	in, root := allocTree(t)
	in.Templates = []*structs.Template{
		// Nomad moves an absolute destination outside the task directory
		// into it, and makes missing directories.
		{EmbeddedTmpl: "abs", DestPath: "/etc/app/app.conf"},
		{EmbeddedTmpl: "shared", DestPath: "../alloc/data/shared.conf"},
	}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "web/etc/app/app.conf")); got != "abs" {
		t.Fatalf("rendered %q", got)
	}
	if got := readFile(t, filepath.Join(root, "alloc/data/shared.conf")); got != "shared" {
		t.Fatalf("rendered %q", got)
	}
}

func TestPathsThatEscapeAreRefused(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		tmpl  structs.Template
		setup func(root string)
	}{
		{name: "a destination up and out", tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "../../escaped"}},
		{name: "a destination in another task's directory", tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "../other/secrets/x"}},
		{name: "a source up and out", tmpl: structs.Template{SourcePath: "../../x.tpl", DestPath: "local/x"}},
		{name: "an absolute source outside", tmpl: structs.Template{SourcePath: filepath.Join(outside, "secret"), DestPath: "local/x"}},
		{name: "a source through a symlink", tmpl: structs.Template{SourcePath: "local/link", DestPath: "local/x"},
			setup: func(root string) {
				must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "web/local/link")))
			}},
		{name: "a destination directory that is a symlink out", tmpl: structs.Template{EmbeddedTmpl: "x", DestPath: "local/out/app.conf"},
			setup: func(root string) { must(t, os.Symlink(outside, filepath.Join(root, "web/local/out"))) }},
		{name: "file() up and out", tmpl: structs.Template{EmbeddedTmpl: `{{ file "../../x" }}`, DestPath: "local/x"}},
		{name: "file() through a symlink", tmpl: structs.Template{EmbeddedTmpl: `{{ file "local/link" }}`, DestPath: "local/x"},
			setup: func(root string) {
				must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "web/local/link")))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, root := allocTree(t)
			if tc.setup != nil {
				tc.setup(root)
			}
			tm := tc.tmpl
			in.Templates = []*structs.Template{&tm}
			_, err := Render(in)
			if !errors.Is(err, ErrPathEscapes) {
				t.Fatalf("error %v, want ErrPathEscapes", err)
			}
			var te *Error
			if !errors.As(err, &te) || te.Index != 0 || te.Destination != tm.DestPath {
				t.Fatalf("error %#v does not name the template", err)
			}
			if _, err := os.Stat(filepath.Join(outside, "app.conf")); err == nil {
				t.Fatal("a file was written outside the alloc dir")
			}
		})
	}
}

func TestASymlinkAtTheDestinationIsReplacedNotFollowed(t *testing.T) {
	in, root := allocTree(t)
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("untouched"), 0o644))
	must(t, os.Symlink(victim, filepath.Join(root, "web/local/app.conf")))
	in.Templates = []*structs.Template{{EmbeddedTmpl: "rendered", DestPath: "local/app.conf"}}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, victim); got != "untouched" {
		t.Fatalf("the symlink's target was written: %q", got)
	}
	fi, err := os.Lstat(filepath.Join(root, "web/local/app.conf"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("destination %v %v", fi, err)
	}
}

func TestPermsAndOwner(t *testing.T) {
	in, root := allocTree(t)
	uid, gid := 4242, 4343
	in.Chown = os.Geteuid() == 0
	in.Templates = []*structs.Template{
		{EmbeddedTmpl: "#!/bin/sh\n", DestPath: "local/run.sh", Perms: "0750", Uid: &uid, Gid: &gid},
		{EmbeddedTmpl: "default", DestPath: "local/default"},
	}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "web/local/run.sh"))
	if err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("run.sh %v %v", fi.Mode(), err)
	}
	if in.Chown {
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Fatalf("owner %d:%d, want %d:%d", st.Uid, st.Gid, uid, gid)
		}
	}
	if fi, _ := os.Stat(filepath.Join(root, "web/local/default")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("default perms %v", fi.Mode())
	}
}

func TestTemplatesThatCannotBeRendered(t *testing.T) {
	cases := []struct {
		name string
		tmpl structs.Template
		want string
	}{
		{"no destination", structs.Template{EmbeddedTmpl: "x"}, "destination is missing"},
		{"both data and source", structs.Template{EmbeddedTmpl: "x", SourcePath: "local/a.tpl", DestPath: "local/x"}, "both data and source"},
		{"neither data nor source", structs.Template{DestPath: "local/x"}, "neither data nor source"},
		{"perms not octal", structs.Template{EmbeddedTmpl: "x", DestPath: "local/x", Perms: "rw-r--r--"}, `perms "rw-r--r--" is not an octal file mode`},
		{"a missing source", structs.Template{SourcePath: "local/none.tpl", DestPath: "local/x"}, "no such file"},
		{"a missing file()", structs.Template{EmbeddedTmpl: `{{ file "local/none" }}`, DestPath: "local/x"}, `file "local/none"`},
		{"a parse error", structs.Template{EmbeddedTmpl: "{{ if }}", DestPath: "local/x"}, "parse:"},
		{"an unknown function", structs.Template{EmbeddedTmpl: `{{ bogus "x" }}`, DestPath: "local/x"}, `function "bogus" not defined`},
		{"a sprig function", structs.Template{EmbeddedTmpl: `{{ "x" | sprig_upper }}`, DestPath: "local/x"}, "do not provide sprig functions"},
		{"an unsupported function", structs.Template{EmbeddedTmpl: `{{ "a=b" | toTOML }}`, DestPath: "local/x"}, "toTOML (x:1:11): Drover has no TOML encoder"},
		{"plugin is refused as in Nomad", structs.Template{EmbeddedTmpl: `{{ plugin "/bin/true" }}`, DestPath: "local/x"}, "plugin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := allocTree(t)
			tm := tc.tmpl
			in.Templates = []*structs.Template{{EmbeddedTmpl: "first", DestPath: "local/first"}, &tm}
			_, err := Render(in)
			var te *Error
			if !errors.As(err, &te) || te.Index != 1 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want template[1] failing with %q", err, tc.want)
			}
		})
	}
}

// TestExternalFunctionsAreRefusedByName: a template that reads Consul,
// Vault or Nomad variables is refused before anything is rendered, naming each
// function and where it is, even in a branch that would not run.
func TestExternalFunctionsAreRefusedByName(t *testing.T) {
	in, root := allocTree(t)
	in.Templates = []*structs.Template{{
		EmbeddedTmpl: "db={{ key \"app/db\" }}\n{{ if false }}{{ with secret \"kv/app\" }}{{ .Data.pw }}{{ end }}{{ end }}\n{{ range nomadService \"redis\" }}{{ .Address }}{{ end }}{{ define \"x\" }}{{ nomadVar \"a\" }}{{ end }}",
		DestPath:     "local/app.conf",
	}}
	_, err := Render(in)
	var ext *ExternalFunctionError
	if !errors.As(err, &ext) || len(ext.Calls) != 3 {
		t.Fatalf("error %v, want an ExternalFunctionError naming 3 calls (nomadService is Drover's own)", err)
	}
	for _, want := range []string{
		`template[0] (destination "local/app.conf"): `,
		"key (app.conf:1:6) reads from Consul",
		"secret (app.conf:2:22) reads from Vault",
		"nomadVar (app.conf:3:74) reads from Nomad variables",
		"Drover has no Consul, Vault or Nomad variables source for templates",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "web/local/app.conf")); !os.IsNotExist(err) {
		t.Fatalf("a refused template was written: %v", err)
	}
}

func TestEnvTemplatesReturnTheirVariables(t *testing.T) {
	in, root := allocTree(t)
	in.Templates = []*structs.Template{
		{EmbeddedTmpl: "# app settings\nAPP_PORT={{ env \"NOMAD_PORT_http\" }}\nexport APP_MODE='prod'\nSHARED=first\n", DestPath: "secrets/app.env", Envvars: true},
		{EmbeddedTmpl: "NOT_ENV=1\n", DestPath: "local/plain"},
		{EmbeddedTmpl: "SHARED=\"second\\nline\"\n", DestPath: "local/more.env", Envvars: true},
	}
	vars, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"APP_PORT": "23456", "APP_MODE": "prod", "SHARED": "second\nline"}
	if len(vars) != len(want) {
		t.Fatalf("vars %v, want %v", vars, want)
	}
	for k, v := range want {
		if vars[k] != v {
			t.Fatalf("vars %v, want %v", vars, want)
		}
	}
	if got := readFile(t, filepath.Join(root, "web/secrets/app.env")); !strings.Contains(got, "APP_PORT=23456") {
		t.Fatalf("env file %q", got)
	}
}

func TestABadEnvTemplateFailsTheRender(t *testing.T) {
	in, _ := allocTree(t)
	in.Templates = []*structs.Template{{EmbeddedTmpl: "OK=1\nthis is not an assignment\n", DestPath: "local/app.env", Envvars: true}}
	_, err := Render(in)
	if err == nil || !strings.Contains(err.Error(), "env file line 2") {
		t.Fatalf("error %v", err)
	}
}

func TestOutputIsBounded(t *testing.T) {
	var b strings.Builder
	w := &limitedWriter{w: &b, left: 10}
	if _, err := w.Write([]byte("12345")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("123456")); !errors.Is(err, errOutputTooLarge) {
		t.Fatalf("error %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

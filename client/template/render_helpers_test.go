package template

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// fixedNow is the clock of the tests, outside UTC to show timestamp
// converts.
var fixedNow = time.Date(2024, 5, 6, 9, 8, 7, 0, time.FixedZone("CEST", 2*3600))

// allocTree makes <root>/alloc and <root>/web/{local,secrets} and returns
// an Input for task "web" with a small environment.
func allocTree(t *testing.T) (Input, string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"alloc", "web/local", "web/secrets", "other/secrets"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"NOMAD_ALLOC_ID":    "8f2a4c1e-0000-4000-8000-000000000001",
		"NOMAD_TASK_DIR":    filepath.Join(root, "web/local"),
		"NOMAD_SECRETS_DIR": filepath.Join(root, "web/secrets"),
		"NOMAD_ALLOC_DIR":   filepath.Join(root, "alloc"),
		"NOMAD_PORT_http":   "23456",
		"NOMAD_META_tier":   "front",
		"EMPTY":             "",
	}
	return Input{
		TaskDir:     filepath.Join(root, "web"),
		SharedDir:   filepath.Join(root, "alloc"),
		Env:         env,
		Interpolate: func(s string) string { return os.Expand(s, func(k string) string { return env[k] }) },
		Now:         func() time.Time { return fixedNow },
	}, root
}

// renderData renders one inline template to local/out and returns the
// file's text.
func renderData(t *testing.T, data string) (string, error) {
	t.Helper()
	in, root := allocTree(t)
	in.Templates = []*structs.Template{{EmbeddedTmpl: data, DestPath: "local/out"}}
	if _, err := Render(in); err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, "web/local/out"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

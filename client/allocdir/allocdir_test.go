package allocdir

import (
	"os"
	"testing"
)

func TestBuildAndDestroy(t *testing.T) {
	a := New(t.TempDir(), "a1")
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatalf("Build must be idempotent: %v", err)
	}
	td := a.Task("web")
	for _, d := range []string{a.SharedDir, a.LogDir, td.LocalDir, td.SecretsDir} {
		if _, err := os.Stat(d); err != nil {
			t.Fatal(err)
		}
	}
	if fi, _ := os.Stat(td.SecretsDir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("secrets mode %v", fi.Mode().Perm())
	}
	if err := a.Destroy(); err != nil || a.Exists() {
		t.Fatalf("destroy: %v", err)
	}
}

package allocdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A task's secrets directory is not readable through the alloc dir reads,
// as in Nomad, whose documentation promises that NOMAD_SECRETS_DIR is not
// reachable with `alloc fs` or the filesystem API: not directly, and not
// through a symlink a task made to it. The directory's entry is still
// listed with its task's other directories.
func TestSecretsDirIsNotReadable(t *testing.T) {
	a := fsFixture(t)
	td := a.Task("web")
	if err := os.WriteFile(filepath.Join(td.SecretsDir, "token"), []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secrets/token", filepath.Join(td.LocalDir, "to-token")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secrets", filepath.Join(td.LocalDir, "to-secrets")); err != nil {
		t.Fatal(err)
	}

	for _, p := range []string{"web/secrets", "/web/secrets/", "web/secrets/token", "web/local/../secrets/token", "web/local/to-token", "web/local/to-secrets"} {
		if _, err := a.Stat(p); !errors.Is(err, ErrSecretsDir) {
			t.Errorf("Stat(%q): %v, want ErrSecretsDir", p, err)
		}
		if f, err := a.Open(p); !errors.Is(err, ErrSecretsDir) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%q): %v, want ErrSecretsDir", p, err)
		}
		if _, err := a.List(p); !errors.Is(err, ErrSecretsDir) {
			t.Errorf("List(%q): %v, want ErrSecretsDir", p, err)
		}
	}

	list, err := a.List("web")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, fi := range list {
		found = found || fi.Name == "secrets"
	}
	if !found {
		t.Fatalf("the task dir's listing lost its secrets entry: %+v", list)
	}
	// The shared alloc dir has no secrets; a file named so elsewhere is
	// just a file.
	if err := os.MkdirAll(filepath.Join(a.SharedDir, "data", "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := a.List("alloc/data/secrets"); err != nil {
		t.Fatalf("a directory named secrets outside a task dir: %v", err)
	}
}

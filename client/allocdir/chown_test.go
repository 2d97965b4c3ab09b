package allocdir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A task whose user changed between versions gets what the old user left
// in its directories, and nothing else: no symlink's target, no other
// user's file, no file hard-linked from elsewhere.
func TestChownHandsTheOldUsersFilesToTheNewUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	base := t.TempDir()
	a := New(base, "a1")
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	td := a.Task("web")
	const oldUID, newUID, otherUID = 40001, 40002, 40003
	if err := td.Chown(oldUID, oldUID); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside")
	victim := filepath.Join(outside, "victim")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(outside, 0o755))
	must(os.WriteFile(victim, nil, 0o644))
	must(os.Lchown(victim, oldUID, oldUID)) // the old user's, but outside: a hard link must not carry it over
	local := td.LocalDir
	must(os.MkdirAll(filepath.Join(local, "sub/deeper"), 0o755))
	must(os.WriteFile(filepath.Join(local, "sub/deeper/f"), nil, 0o644))
	must(os.WriteFile(filepath.Join(local, "other"), nil, 0o644))
	must(os.Symlink(victim, filepath.Join(local, "link")))
	must(os.Link(victim, filepath.Join(local, "hard")))
	must(os.WriteFile(filepath.Join(td.SecretsDir, "s"), nil, 0o600))
	for _, p := range []string{"sub", "sub/deeper", "sub/deeper/f", "link"} {
		must(os.Lchown(filepath.Join(local, p), oldUID, oldUID))
	}
	must(os.Lchown(filepath.Join(local, "other"), otherUID, otherUID))
	must(os.Lchown(filepath.Join(td.SecretsDir, "s"), oldUID, oldUID))

	must(td.Chown(newUID, newUID))
	owner := func(p string) uint32 {
		var st syscall.Stat_t
		must(syscall.Lstat(p, &st))
		return st.Uid
	}
	for p, want := range map[string]uint32{
		local: newUID, filepath.Join(local, "sub"): newUID, filepath.Join(local, "sub/deeper/f"): newUID,
		filepath.Join(local, "link"): newUID, filepath.Join(td.SecretsDir, "s"): newUID,
		filepath.Join(local, "other"): otherUID, victim: oldUID,
	} {
		if got := owner(p); got != want {
			t.Errorf("%s is owned by %d, want %d", p, got, want)
		}
	}
	// Unchanged user: nothing inside is touched.
	must(os.Lchown(filepath.Join(local, "sub/deeper/f"), otherUID, otherUID))
	must(td.Chown(newUID, newUID))
	if got := owner(filepath.Join(local, "sub/deeper/f")); got != otherUID {
		t.Errorf("a chown to the same user rewrote the tree: %d", got)
	}
}

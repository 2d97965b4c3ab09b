package artifact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// write makes a file with mode (chmod, so the umask does not narrow it).
func write(t *testing.T, p, body string, mode fs.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func modeOf(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func TestLocalSourcesOutsideTheAllocDirAreRefused(t *testing.T) {
	f := newFixture(t)
	outside := t.TempDir()
	secret := write(t, filepath.Join(outside, "secret"), "s3cret", 0o600)
	for _, src := range []string{
		"file:///etc/shadow",
		"/etc/shadow",
		"file::/etc/shadow",
		secret,
		"file://" + secret,
		"file://localhost" + secret,
		// ".." is taken lexically: this names outside/secret.
		filepath.Join(f.alloc.Root, "..", "..", "..") + secret,
		"file://" + f.alloc.Root + "/../" + filepath.Base(f.alloc.Root) + "-other/x",
	} {
		err := f.fetchAs(&Fetcher{}, &structs.TaskArtifact{GetterSource: src})
		refused(t, err, "outside the allocation directory", SettingAllowedLocalPaths, SettingDisableIsolation)
	}
	if es := f.localEntries(); len(es) != 0 {
		t.Fatalf("local/ holds %v", es)
	}
}

func TestSymlinksCannotLeadLocalSourcesOut(t *testing.T) {
	f := newFixture(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret"), "s3cret", 0o644)
	data := filepath.Join(f.alloc.SharedDir, "data")
	write(t, filepath.Join(data, "conf"), "conf", 0o644)
	for name, target := range map[string]string{
		"file-link": filepath.Join(outside, "secret"),
		"dir-link":  outside,
		"up":        "../../../..",
		// Absolute, even to a file inside: the kernel would resolve it
		// from the real root, so it is not followed.
		"abs-inside": filepath.Join(data, "conf"),
		"rel-inside": "conf",
	} {
		if err := os.Symlink(target, filepath.Join(data, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"file-link", "dir-link/secret", "dir-link", "abs-inside", "up/" + filepath.Base(outside) + "/secret"} {
		err := f.fetchAs(&Fetcher{}, &structs.TaskArtifact{GetterSource: "file://" + filepath.Join(data, rel)})
		if errors.Is(err, fs.ErrNotExist) {
			continue // "up" may not reach outside's parent: nothing read either way
		}
		refused(t, err, "cannot be read inside", "relative symlinks", SettingAllowedLocalPaths)
	}
	if es := f.localEntries(); len(es) != 0 {
		t.Fatalf("local/ holds %v", es)
	}
	// A relative link that stays inside is followed.
	if err := f.fetchAs(&Fetcher{}, &structs.TaskArtifact{GetterSource: filepath.Join(data, "rel-inside"), GetterMode: ModeFile, RelativeDest: "local/c"}); err != nil {
		t.Fatal(err)
	}
	if f.read("local/c") != "conf" {
		t.Fatal("not copied")
	}
	// An allowed directory is no door out either.
	allowed := &Fetcher{Sources: Sources{LocalPaths: []string{data}}}
	err := f.fetchAs(allowed, &structs.TaskArtifact{GetterSource: filepath.Join(data, "dir-link", "secret")})
	refused(t, err, "cannot be read inside")
}

func TestLocalCopiesKeepTheSourcesPermissions(t *testing.T) {
	f := newFixture(t)
	data := filepath.Join(f.alloc.SharedDir, "data")
	for name, tc := range map[string]struct{ src, want fs.FileMode }{
		"private":  {0o600, 0o600},
		"group":    {0o640, 0o640},
		"exec":     {0o755, 0o755},
		"setuid":   {0o755 | fs.ModeSetuid, 0o755},
		"readonly": {0o400, 0o400},
	} {
		p := write(t, filepath.Join(data, name), name, tc.src)
		if err := f.fetchAs(&Fetcher{}, &structs.TaskArtifact{GetterSource: p, RelativeDest: "local/perm"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := modeOf(t, filepath.Join(f.task.LocalDir, "perm", name)); got != tc.want {
			t.Errorf("%s: copied as %v, want %v", name, got, tc.want)
		}
	}
	// The same outside the alloc dir, with any path allowed: a private
	// file stays private (the copy of /etc/shadow was once 0644).
	secret := write(t, filepath.Join(t.TempDir(), "shadow"), "root:*:", 0o600)
	if err := f.fetchAs(&Fetcher{Sources: Sources{AnyLocalPath: true}}, &structs.TaskArtifact{GetterSource: secret, RelativeDest: "local/any"}); err != nil {
		t.Fatal(err)
	}
	if got := modeOf(t, filepath.Join(f.task.LocalDir, "any", "shadow")); got != 0o600 {
		t.Fatalf("copied as %v, want -rw-------", got)
	}
}

func TestAllowedLocalPathsAreReadWhole(t *testing.T) {
	f := newFixture(t)
	repo := t.TempDir()
	write(t, filepath.Join(repo, "bin", "tool"), "#!/bin/sh\n", 0o750)
	write(t, filepath.Join(repo, "etc", "tool.conf"), "x=1\n", 0o640)
	if err := os.Symlink("../bin/tool", filepath.Join(repo, "etc", "tool-link")); err != nil {
		t.Fatal(err)
	}
	fe := &Fetcher{Sources: Sources{LocalPaths: []string{repo}}}
	if err := f.fetchAs(fe, &structs.TaskArtifact{GetterSource: "file://" + repo, RelativeDest: "local/repo"}); err != nil {
		t.Fatal(err)
	}
	if f.read("local/repo/bin/tool") != "#!/bin/sh\n" || f.read("local/repo/etc/tool.conf") != "x=1\n" || f.read("local/repo/etc/tool-link") != "#!/bin/sh\n" {
		t.Fatal("the tree was not copied")
	}
	if m := modeOf(t, filepath.Join(f.task.LocalDir, "repo", "bin", "tool")); m != 0o750 {
		t.Fatalf("tool copied as %v", m)
	}
	if m := modeOf(t, filepath.Join(f.task.LocalDir, "repo", "etc", "tool-link")); m&fs.ModeSymlink == 0 {
		t.Fatalf("the link was copied as %v", m)
	}
	// A link in the tree that leads out of the destination is refused,
	// as an archive's would be.
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "etc", "passwd")); err != nil {
		t.Fatal(err)
	}
	err := f.fetchAs(fe, &structs.TaskArtifact{GetterSource: "file://" + repo, RelativeDest: "local/repo2"})
	if !errors.Is(err, ErrUnsafeArchive) {
		t.Fatalf("err = %v", err)
	}
	// Bounded like a download.
	err = f.fetchAs(&Fetcher{MaxDownloadBytes: 12, Sources: fe.Sources}, &structs.TaskArtifact{GetterSource: "file://" + filepath.Join(repo, "bin"), RelativeDest: "local/repo3"})
	if err != nil {
		t.Fatalf("10 bytes within 12: %v", err)
	}
	if es, _ := os.ReadDir(filepath.Join(f.task.LocalDir, "repo3")); len(es) != 1 {
		t.Fatalf("local/repo3 holds %v", es)
	}
	err = f.fetchAs(&Fetcher{MaxDownloadBytes: 9, Sources: fe.Sources}, &structs.TaskArtifact{GetterSource: "file://" + filepath.Join(repo, "bin"), RelativeDest: "local/repo4"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestMalformedFileURLsAreRefused(t *testing.T) {
	f := newFixture(t)
	for _, src := range []string{"file://etc/shadow", "file:relative/x", "file::http://example.com/x"} {
		err := f.fetchAs(&Fetcher{Sources: Sources{AnyLocalPath: true}}, &structs.TaskArtifact{GetterSource: src})
		if err == nil || IsRecoverable(err) {
			t.Fatalf("%s: err = %v", src, err)
		}
	}
}

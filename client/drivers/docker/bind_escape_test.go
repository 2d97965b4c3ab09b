package docker

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBindSourcesStayInTheAllocDir: a relative bind source is resolved
// against the task directory and must stay inside the alloc directory,
// also through symlinks, which the task itself can plant in local/ (from
// inside its container, where "/" means the container's root, but the
// daemon resolves the link on the host when the next attempt starts). And
// a relative path is not a way around volumes being disabled, nor, with
// them enabled, a way to say a host path.
func TestBindSourcesStayInTheAllocDir(t *testing.T) {
	for _, volumes := range []bool{false, true} {
		d, cli := newTestDriver(t, func(o *Options) { o.Config.VolumesEnabled = volumes })
		cases := []struct {
			name   string
			config map[string]any
		}{
			{"a volume through a symlink to /", map[string]any{"volumes": []any{"local/root:/host"}}},
			{"a volume through a relative symlink", map[string]any{"volumes": []any{"local/up/etc:/host-etc"}}},
			{"a bind mount through a symlink", map[string]any{"mount": []map[string]any{{"type": "bind", "source": "local/root", "target": "/host"}}}},
			{"a volume through a dangling symlink", map[string]any{"volumes": []any{"local/dangling/sub:/x"}}},
			{"a volume with ..", map[string]any{"volumes": []any{"../../../../etc:/x"}}},
			{"a bind mount with ..", map[string]any{"mount": []map[string]any{{"source": "local/../../../../etc", "target": "/x"}}}},
		}
		for _, c := range cases {
			name := c.name
			if volumes {
				name += " with volumes enabled"
			}
			t.Run(name, func(t *testing.T) {
				tt := newTestTask(t, cli, withConfig(c.config))
				local := filepath.Join(tt.cfg.TaskDir, "local")
				if err := os.Symlink("/", filepath.Join(local, "root")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../../../../../../../..", filepath.Join(local, "up")); err != nil {
					t.Fatal(err)
				}
				outside := filepath.Join(t.TempDir(), "made-by-the-daemon")
				if err := os.Symlink(outside, filepath.Join(local, "dangling")); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if _, err := os.Lstat(outside); err == nil {
						t.Errorf("the daemon created %s outside the alloc dir", outside)
					}
				})
				refusedStart(t, d, tt, "leaves the alloc directory")
			})
		}
	}
}

// TestBindSourcesInsideTheAllocDirAreBound: what stays inside is bound,
// at the path it resolves to, with volumes disabled.
func TestBindSourcesInsideTheAllocDirAreBound(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, withConfig(map[string]any{"volumes": []any{"local/conf:/etc/app:ro", "../alloc/data:/data"}}))
	tt.cfg.Config["args"] = []any{"-c", "cat /etc/app/x /data/y"}
	for _, f := range []string{filepath.Join(tt.cfg.TaskDir, "local", "real", "x"), filepath.Join(tt.cfg.AllocDir, "alloc", "data", "y")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(filepath.Base(f)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside the alloc dir is fine.
	if err := os.Symlink("real", filepath.Join(tt.cfg.TaskDir, "local", "conf")); err != nil {
		t.Fatal(err)
	}
	h := start(t, d, tt)
	if res := waitExit(t, d, h.TaskID, 30*time.Second); res.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %q", res.ExitCode, tt.stderr.String())
	}
	tt.stdout.waitOutput(t, "the bound files", func(s string) bool { return s == "x\ny\n" })
}

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

func TestPluginOptionsAreCheckedAndNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"an unknown capability", map[string]any{"allow_caps": []any{"chown", "flying"}}, `"allow_caps": "flying" is not a Linux capability`},
		{"a negative pids_limit", map[string]any{"pids_limit": -1}, `"pids_limit": -1 is negative`},
		{"a pids_limit that is no number", map[string]any{"pids_limit": "many"}, `"pids_limit"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			err := o.PluginOptions(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %s", err, tc.want)
			}
			d := New(Options{Enabled: true, ConfigError: err})
			defer d.Shutdown()
			if fp := d.Fingerprint(); fp.Healthy || !strings.Contains(fp.HealthDescription, tc.want) {
				t.Errorf("fingerprint %+v does not carry the config error", fp)
			}
		})
	}
	var o Options
	if err := o.PluginOptions(map[string]any{"allow_caps": []any{"CAP_CHOWN", "net_raw"}, "pids_limit": 64}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.AllowCaps, ",") != "chown,net_raw" || o.PidsLimit != 64 {
		t.Errorf("options %+v", o)
	}
}

func TestAChrootEnvThatWouldExposeTheHostIsRefused(t *testing.T) {
	for _, env := range []map[string]string{
		{"/": "/"},
		{"/srv": "/"},
		{"usr": "/usr"},
		{"/srv/data": "/local/data"},
	} {
		if err := checkChrootEnv(env); err == nil || !strings.Contains(err.Error(), "chroot_env") {
			t.Errorf("%v: %v", env, err)
		}
	}
	if err := checkChrootEnv(DefaultChrootEnv); err != nil {
		t.Errorf("the default: %v", err)
	}
}

// The task runner names the task's directories by host paths; inside the
// chroot they are /alloc, /local, /secrets.
func TestHostPathsOfTheTaskAreRewrittenForTheChroot(t *testing.T) {
	cfg := &drivers.TaskConfig{AllocDir: "/data/alloc/a1", TaskDir: "/data/alloc/a1/web"}
	for in, want := range map[string]string{
		"/data/alloc/a1/web/local":          "/local",
		"/data/alloc/a1/web/local/conf.yml": "/local/conf.yml",
		"/data/alloc/a1/web/secrets":        "/secrets",
		"/data/alloc/a1/alloc":              "/alloc",
		"/data/alloc/a1/alloc/data/x":       "/alloc/data/x",
		"/data/alloc/a1/web":                "/",
		"/data/alloc/a1/webby":              "/data/alloc/a1/webby",
		"/usr/bin/env":                      "/usr/bin/env",
		"--port=8080":                       "--port=8080",
	} {
		if got := inTask(cfg, in); got != want {
			t.Errorf("inTask(%q) = %q, want %q", in, got, want)
		}
	}
}

// A chroot_env that maps a whole /etc gets copies of what tasks need,
// never shadow or sudoers.
func TestAMappedEtcIsCopiedWithoutItsSecrets(t *testing.T) {
	needRoot(t)
	etc := t.TempDir()
	for name, body := range map[string]string{
		"passwd":  "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
		"group":   "root:x:0:\nnogroup:x:65534:\n",
		"shadow":  "root:secret:::::::\n",
		"gshadow": "root:*::\n",
		"sudoers": "ALL ALL=(ALL) NOPASSWD: ALL\n",
		"hosts":   "127.0.0.1 localhost\n",
	} {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{etc: "/etc"}
	for _, p := range []string{"/bin", "/usr", "/lib", "/lib64", "/sbin"} {
		env[p] = p
	}
	d := New(Options{Enabled: true, ChrootEnv: env})
	t.Cleanup(d.Shutdown)
	cfg, stdout, stderr := testTask(t, `ls /etc | tr '\n' ' '; echo`)
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr.String())
	}
	waitOutput(t, stdout, "\n")
	got := strings.Fields(stdout.String())
	if !contains(got, "passwd") || !contains(got, "hosts") || contains(got, "shadow") || contains(got, "gshadow") || contains(got, "sudoers") {
		t.Errorf("the task's /etc holds %v", got)
	}
}

// An agent file without chroot_env hands the driver an empty map, which
// means the default, not an empty chroot.
func TestAnEmptyChrootEnvMeansTheDefault(t *testing.T) {
	needRoot(t)
	d := New(Options{Enabled: true, ChrootEnv: map[string]string{}})
	t.Cleanup(d.Shutdown)
	cfg, _, stderr := testTask(t, "test -x /usr/bin/env")
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr.String())
	}
}

package docker

import (
	"testing"
)

// TestHostNamespacesAreRefused: pid_mode, ipc_mode, uts_mode or
// userns_mode "host" puts the task in the host's namespace (its
// processes, shared memory, hostname, or outside the daemon's user
// remapping), so each needs allow_privileged.
func TestHostNamespacesAreRefused(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	for _, key := range []string{"pid_mode", "ipc_mode", "uts_mode", "userns_mode"} {
		t.Run(key, func(t *testing.T) {
			tt := newTestTask(t, cli, withConfig(map[string]any{key: "host"}))
			refusedStart(t, d, tt, key+` "host" is not allowed on this client`)
		})
	}
}

// TestPrivateNamespaceModesArePassed: the modes that keep the task in its
// own namespaces are passed, and allow_privileged allows host.
func TestPrivateNamespaceModesArePassed(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, withConfig(map[string]any{"ipc_mode": "shareable", "args": []any{"-c", "sleep 30"}}))
	h := start(t, d, tt)
	if got := inspect(t, cli, h).HostConfig.IpcMode; got != "shareable" {
		t.Fatalf("ipc mode = %q", got)
	}
	priv := New(Options{Config: func() PluginConfig { c := testConfig(); c.AllowPrivileged = true; return c }()})
	t.Cleanup(priv.Shutdown)
	tc, err := ParseTaskConfig(map[string]any{"image": "x", "pid_mode": "host", "userns_mode": "host"})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := priv.buildSpec(tt.cfg, tc)
	if err != nil || spec.HostConfig.PidMode != "host" || spec.HostConfig.UsernsMode != "host" {
		t.Fatalf("with allow_privileged: %+v, %v", spec, err)
	}
}

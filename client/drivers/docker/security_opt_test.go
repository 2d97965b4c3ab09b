package docker

import (
	"slices"
	"strconv"
	"testing"
)

// TestSecurityOptThatUnconfinesIsRefused: security_opt values that turn
// off the container's seccomp filter, AppArmor or SELinux confinement, or
// the masking of /proc and /sys, give a task most of what privileged
// gives, so they need allow_privileged as privileged does.
func TestSecurityOptThatUnconfinesIsRefused(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	for _, opt := range []string{
		"seccomp=unconfined", "seccomp:unconfined", "SECCOMP=Unconfined", `seccomp={"defaultAction":"SCMP_ACT_ALLOW"}`,
		"apparmor=unconfined", "apparmor:unconfined", "label=disable", "label:disable", "systempaths=unconfined",
	} {
		t.Run(opt, func(t *testing.T) {
			tt := newTestTask(t, cli, withConfig(map[string]any{"security_opt": []any{"no-new-privileges", opt}}))
			refusedStart(t, d, tt, "security_opt "+strconv.Quote(opt)+" is not allowed on this client")
		})
	}
}

// TestSecurityOptThatConfinesIsPassed: what only tightens is passed, and
// allow_privileged allows the rest.
func TestSecurityOptThatConfinesIsPassed(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, withConfig(map[string]any{"security_opt": []any{"no-new-privileges", "no-new-privileges=true"}}))
	tt.cfg.Config["args"] = []any{"-c", "sleep 30"}
	h := start(t, d, tt)
	if got := inspect(t, cli, h).HostConfig.SecurityOpt; !slices.Contains(got, "no-new-privileges") {
		t.Fatalf("security opt = %v", got)
	}

	priv := New(Options{Config: func() PluginConfig { c := testConfig(); c.AllowPrivileged = true; return c }()})
	t.Cleanup(priv.Shutdown)
	tc, err := ParseTaskConfig(map[string]any{"image": "x", "security_opt": []any{"seccomp=unconfined", "apparmor=unconfined"}})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := priv.buildSpec(tt.cfg, tc)
	if err != nil || !slices.Equal(spec.HostConfig.SecurityOpt, []string{"seccomp=unconfined", "apparmor=unconfined"}) {
		t.Fatalf("with allow_privileged: %v, %v", spec, err)
	}
}

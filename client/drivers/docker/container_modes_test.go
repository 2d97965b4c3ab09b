package docker

import (
	"testing"
)

// TestContainerModesJoinOnlyTheirOwnAlloc: network_mode, pid_mode and
// ipc_mode "container:<name or id>" join another container's namespace,
// which is how tasks of one alloc share a network (as Nomad's
// network_mode = "container:web-${NOMAD_ALLOC_ID}"). A container of
// another alloc (another job's, possibly another tenant's) or one Drover
// did not start is refused; one of the same alloc is joined.
func TestContainerModesJoinOnlyTheirOwnAlloc(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	other := newTestTask(t, cli, withConfig(map[string]any{"args": []any{"-c", "sleep 30"}}))
	oh := start(t, d, other)
	otherID := containerIDOf(t, oh)
	otherName := inspect(t, cli, oh).Name[1:]

	for _, key := range []string{"network_mode", "pid_mode", "ipc_mode"} {
		for _, target := range []string{otherID, otherName, otherID[:12], "no-such-container"} {
			t.Run(key+" "+target, func(t *testing.T) {
				tt := newTestTask(t, cli, withConfig(map[string]any{key: "container:" + target}))
				refusedStart(t, d, tt, key+` "container:`+target+`"`)
			})
		}
	}

	t.Run("the same alloc", func(t *testing.T) {
		first := newTestTask(t, cli, withConfig(map[string]any{"args": []any{"-c", "sleep 30"}, "ipc_mode": "shareable"}))
		fh := start(t, d, first)
		second := newTestTask(t, cli, withConfig(map[string]any{"args": []any{"-c", "sleep 30"}}))
		second.cfg.AllocID = first.cfg.AllocID
		second.cfg.ID = first.cfg.AllocID + "/sidecar/1"
		second.cfg.TaskName = "sidecar"
		name := inspect(t, cli, fh).Name[1:]
		second.cfg.Config["network_mode"] = "container:" + name
		second.cfg.Config["ipc_mode"] = "container:" + name
		second.cfg.Config["pid_mode"] = "container:" + containerIDOf(t, fh)
		sh := start(t, d, second)
		hc := inspect(t, cli, sh).HostConfig
		want := "container:" + containerIDOf(t, fh)
		if string(hc.NetworkMode) != want || string(hc.IpcMode) != want || string(hc.PidMode) != want {
			t.Fatalf("modes = %q %q %q, want %q", hc.NetworkMode, hc.IpcMode, hc.PidMode, want)
		}
	})
}

package docker

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// refusedStart starts tt on d, wants an error containing want, and wants
// no container of the alloc left on the daemon: a refused start changes
// nothing.
func refusedStart(t *testing.T, d *Driver, tt *testTask, want string) {
	t.Helper()
	h, err := d.StartTask(tt.cfg)
	if err == nil {
		_ = d.DestroyTask(h.TaskID, true)
		t.Fatalf("StartTask started the task, want an error containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("StartTask = %v, want an error containing %q", err, want)
	}
	list, err := d.docker.ContainerList(t.Context(), container.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range list {
		if ct.Labels[LabelAllocID] == tt.cfg.AllocID {
			t.Fatalf("a refused start left container %s", ct.ID)
		}
	}
}

// withConfig is shell("true") with keys added.
func withConfig(extra map[string]any) map[string]any {
	cfg := shell("true")
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

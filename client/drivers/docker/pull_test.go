package docker

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// startRegistry runs a registry without auth on loopback.
func startRegistry(t *testing.T) string {
	t.Helper()
	return dockerimage.StartRegistry(t, nil)
}

// push pushes src as ref anonymously and removes the local tag.
func push(t *testing.T, cli *client.Client, src, ref string) {
	t.Helper()
	dockerimage.Push(t, cli, src, ref, dockerimage.RegistryAuth(t, "", nil))
}

func removeTag(t *testing.T, cli *client.Client, ref string) {
	t.Helper()
	dockerimage.RemoveTag(t, cli, ref)
}

func TestMissingImageIsPulledAndForcePullRefreshesIt(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	reg := startRegistry(t)
	ref := reg + "/drover/busybox:1"
	push(t, cli, dockerimage.Ref, ref)
	t.Cleanup(func() { removeTag(t, cli, ref) })

	tt := newTestTask(t, cli, map[string]any{"image": ref, "command": "true"})
	start(t, d, tt)
	if res := waitExit(t, d, tt.cfg.ID, 30*time.Second); !res.Successful() {
		t.Fatalf("a task of a pulled image: %+v", res)
	}
	if !imagePresent(t, cli, ref) {
		t.Fatal("the image was not pulled")
	}

	// The registry's image changes under the same tag: without force_pull
	// the node's copy is used, with it the new one.
	other := tagTestImage(t, cli)
	changed := newTestTask(t, cli, map[string]any{"image": other, "command": "/bin/sh", "args": []any{"-c", "echo v2 > /marker"}})
	ch := start(t, d, changed)
	waitExit(t, d, changed.cfg.ID, 30*time.Second)
	commit, err := cli.ContainerCommit(context.Background(), containerIDOf(t, ch), container.CommitOptions{Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.ImageRemove(context.Background(), commit.ID, image.RemoveOptions{Force: true}) })
	rc, err := cli.ImagePush(context.Background(), ref, image.PushOptions{RegistryAuth: "e30="})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(rc)
	rc.Close()
	// Locally, ref names the old image again.
	if err := cli.ImageTag(context.Background(), dockerimage.Ref, ref); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		force bool
		want  string
	}{{false, "old"}, {true, "v2"}} {
		tt := newTestTask(t, cli, map[string]any{"image": ref, "force_pull": c.force, "command": "/bin/sh", "args": []any{"-c", "cat /marker 2>/dev/null || echo old"}})
		start(t, d, tt)
		waitExit(t, d, tt.cfg.ID, 30*time.Second)
		tt.stdout.waitOutput(t, fmt.Sprintf("force_pull = %v: want %q", c.force, c.want), func(s string) bool { return s == c.want+"\n" })
	}
}

func TestPullOfAnUnknownTagFailsWithoutRetry(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	reg := startRegistry(t)
	tt := newTestTask(t, cli, map[string]any{"image": reg + "/drover/none:1", "command": "true"})
	_, err := d.StartTask(tt.cfg)
	if err == nil || !strings.Contains(err.Error(), `pulling image "`+reg+`/drover/none:1"`) {
		t.Fatalf("StartTask = %v, want a pull error naming the image", err)
	}
	if drivers.IsRecoverable(err) {
		t.Fatalf("a missing image is retried: %v", err)
	}
}

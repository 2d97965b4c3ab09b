package docker

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// startRegistry runs Debian's docker-registry on a loopback port (which
// the daemon treats as an insecure registry it may use) and returns its
// address. The test skips, naming the package, where it is not installed.
func startRegistry(t *testing.T) string {
	t.Helper()
	return startRegistryWith(t, "")
}

// startRegistryWith runs the registry with extra top-level config (an
// auth block).
func startRegistryWith(t *testing.T, extra string) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("docker-registry is not installed (apt-get install docker-registry)")
	}
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cfg := "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + filepath.Join(dir, "data") + "\nhttp:\n  addr: " + addr + "\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		removeRegistryRefs(addr)
	})
	waitFor(t, "the registry to answer", 20*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK || extra != "" && resp.StatusCode == http.StatusUnauthorized
	})
	return addr
}

// push tags src as ref, pushes it and removes the local tag again, so
// that the next use of ref must pull it.
func push(t *testing.T, cli *client.Client, src, ref string) {
	t.Helper()
	pushWith(t, cli, src, ref, "e30=")
}

// pushWith pushes with an encoded registry auth.
func pushWith(t *testing.T, cli *client.Client, src, ref, auth string) {
	t.Helper()
	ctx := context.Background()
	if err := cli.ImageTag(ctx, src, ref); err != nil {
		t.Fatal(err)
	}
	rc, err := cli.ImagePush(ctx, ref, image.PushOptions{RegistryAuth: auth})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if strings.Contains(string(body), `"error"`) {
		t.Fatalf("push %s: %s", ref, body)
	}
	removeTag(t, cli, ref)
}

func removeTag(t *testing.T, cli *client.Client, ref string) {
	t.Helper()
	if _, err := cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}); err != nil && !strings.Contains(err.Error(), "No such image") {
		t.Fatal(err)
	}
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

// removeRegistryRefs removes every tag and digest reference of the
// registry at addr that pulls left on the daemon.
func removeRegistryRefs(addr string) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return
	}
	defer cli.Close()
	ctx := context.Background()
	list, err := cli.ImageList(ctx, image.ListOptions{All: true})
	if err != nil {
		return
	}
	for _, img := range list {
		for _, ref := range append(append([]string(nil), img.RepoTags...), img.RepoDigests...) {
			if strings.HasPrefix(ref, addr+"/") {
				_, _ = cli.ImageRemove(ctx, ref, image.RemoveOptions{})
			}
		}
	}
}

// Package dockerimage builds the image the docker driver's tests, the
// task runner's docker tests and the end-to-end tests run: a busybox
// rootfs imported from the host's static busybox, since no registry is
// reachable from the machines tests run on. It is a plain package, not
// test code, so that tests of every package (e2e included) share it. The
// image is built once per test binary and reused across runs (building it again
// yields the same tag).
package dockerimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// Ref is the test image's reference.
const Ref = "drover-test/busybox:1"

// PauseRef is the test's infra_image for the docker driver's pause
// containers: the same rootfs, whose command sleeps until it is killed.
const PauseRef = "drover-test/pause:1"

// busyboxPaths are where a static busybox is found (Debian's
// busybox-static installs /bin/busybox).
var busyboxPaths = []string{"/bin/busybox", "/usr/bin/busybox"}

var (
	once     sync.Once
	buildErr error

	pauseOnce     sync.Once
	pauseBuildErr error
)

// Client returns a docker client, skipping the test when the daemon cannot
// be reached: the one thing a machine may lack.
func Client(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Skipf("docker client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		c.Close()
		t.Skipf("dockerd is not reachable (start it, e.g. `dockerd &`): %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Ensure builds the test image if it is missing and returns its reference.
// A failure to build it (no static busybox) fails the test: only an
// unreachable daemon skips.
func Ensure(t testing.TB) string {
	t.Helper()
	c := Client(t)
	once.Do(func() { buildErr = build(c, Ref) })
	if buildErr != nil {
		t.Fatalf("building test image %s: %v", Ref, buildErr)
	}
	return Ref
}

// EnsurePause builds the pause image if it is missing and returns its
// reference (see PauseRef).
func EnsurePause(t testing.TB) string {
	t.Helper()
	c := Client(t)
	pauseOnce.Do(func() { pauseBuildErr = build(c, PauseRef, `CMD ["/bin/sleep", "2147483647"]`) })
	if pauseBuildErr != nil {
		t.Fatalf("building test image %s: %v", PauseRef, pauseBuildErr)
	}
	return PauseRef
}

func build(c *client.Client, ref string, changes ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.ImageInspect(ctx, ref); err == nil {
		return nil
	}
	bb := ""
	for _, p := range busyboxPaths {
		if _, err := os.Stat(p); err == nil {
			bb = p
			break
		}
	}
	if bb == "" {
		return fmt.Errorf("no busybox at %v (apt-get install busybox-static)", busyboxPaths)
	}
	if out, err := exec.Command("file", "-L", bb).Output(); err == nil && !strings.Contains(string(out), "statically linked") {
		return fmt.Errorf("%s is not statically linked (apt-get install busybox-static)", bb)
	}
	tarball, err := rootfs(bb)
	if err != nil {
		return err
	}
	rc, err := c.ImageImport(ctx, image.ImportSource{Source: bytes.NewReader(tarball), SourceName: "-"}, ref, image.ImportOptions{Changes: changes})
	if err != nil {
		return err
	}
	defer rc.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(rc)
	if strings.Contains(buf.String(), `"error"`) {
		return fmt.Errorf("import: %s", buf.String())
	}
	_, err = c.ImageInspect(ctx, ref)
	return err
}

// rootfs is a tarball of /bin/busybox with a link for each applet, and
// the directories a container expects.
func rootfs(bb string) ([]byte, error) {
	data, err := os.ReadFile(bb)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", bb, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"bin", "etc", "tmp", "proc", "sys", "dev", "alloc", "local", "secrets"} {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: mode}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	passwd := []byte("root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n")
	if err := tw.WriteHeader(&tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(passwd))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(passwd); err != nil {
		return nil, err
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" || strings.Contains(applet, "/") {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadInto copies the test image from the default daemon into another
// one (a daemon a test runs of its own) and returns its reference.
func LoadInto(t testing.TB, dst *client.Client) string {
	t.Helper()
	Ensure(t)
	src := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc, err := src.ImageSave(ctx, []string{Ref})
	if err != nil {
		t.Fatalf("saving test image %s: %v", Ref, err)
	}
	defer rc.Close()
	resp, err := dst.ImageLoad(ctx, rc)
	if err != nil {
		t.Fatalf("loading test image %s: %v", Ref, err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if _, err := dst.ImageInspect(ctx, Ref); err != nil {
		t.Fatalf("test image %s after the load: %v (%s)", Ref, err, buf.String())
	}
	return Ref
}

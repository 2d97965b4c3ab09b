package dockerimage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"golang.org/x/crypto/bcrypt"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// RegistryUser is the one account of a registry behind htpasswd auth.
type RegistryUser struct{ Name, Password string }

// StartRegistry runs Debian's docker-registry on a loopback port (which
// the daemon treats as an insecure registry: plain HTTP, to which it also
// sends credentials) and returns its address; with user, behind htpasswd
// auth with that one account. The test skips, naming the package, where
// it is not installed. Cleanup stops it and removes every image reference
// of it that pulls left on the daemon.
func StartRegistry(t testing.TB, user *RegistryUser) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("docker-registry is not installed (apt-get install docker-registry)")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cfg := "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + filepath.Join(dir, "data") + "\nhttp:\n  addr: " + addr + "\n"
	if user != nil {
		// bcrypt is the hash htpasswd auth reads.
		hash, err := bcrypt.GenerateFromPassword([]byte(user.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(file, []byte(user.Name+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += "auth:\n  htpasswd:\n    realm: drover-test\n    path: " + file + "\n"
	}
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
	want := http.StatusOK
	if user != nil {
		want = http.StatusUnauthorized
	}
	wait.For(t, 20*time.Second, func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == want, "the registry answered " + resp.Status
	})
	return addr
}

// RegistryAuth is the encoded auth of a push or pull as user (anonymous
// when nil).
func RegistryAuth(t testing.TB, addr string, user *RegistryUser) string {
	t.Helper()
	if user == nil {
		return base64.URLEncoding.EncodeToString([]byte("{}"))
	}
	b, err := json.Marshal(registry.AuthConfig{Username: user.Name, Password: user.Password, ServerAddress: addr})
	if err != nil {
		t.Fatal(err)
	}
	return base64.URLEncoding.EncodeToString(b)
}

// Push tags src as ref, pushes it with auth and removes the local tag
// again, so that the next use of ref must pull it.
func Push(t testing.TB, cli *client.Client, src, ref, auth string) {
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
	RemoveTag(t, cli, ref)
}

// RemoveTag removes a local tag (which may be missing).
func RemoveTag(t testing.TB, cli *client.Client, ref string) {
	t.Helper()
	if _, err := cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}); err != nil && !strings.Contains(err.Error(), "No such image") {
		t.Fatal(err)
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

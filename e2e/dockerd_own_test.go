//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// ownDockerd is a Docker Engine of the test's own, for tests that stop
// and start the daemon: the shared one (/var/run/docker.sock) serves
// other tests and is never stopped. It runs with live-restore, so its
// containers outlive a stop; with its own socket, data, exec root and pid
// file; on a bridge of its own the test makes (never --bridge=none, with
// which dockerd deletes the host's docker0, the shared daemon's bridge);
// and without touching iptables.
type ownDockerd struct {
	t      *testing.T
	dir    string
	socket string
	bridge string
	args   []string
	cmd    *exec.Cmd
	done   chan error
	log    *os.File
	cli    *client.Client
}

// startOwnDockerd starts the daemon with the test image loaded, and
// removes it all (containers, daemon, mounts, bridge, files) in cleanup.
func startOwnDockerd(t *testing.T) *ownDockerd {
	t.Helper()
	if _, err := exec.LookPath("dockerd"); err != nil {
		t.Skipf("no dockerd: %v", err)
	}
	dockerimage.Ensure(t)
	// Short paths: containerd's shim sockets live under the exec root and
	// a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "drdk")
	if err != nil {
		t.Fatal(err)
	}
	d := &ownDockerd{t: t, dir: dir, socket: filepath.Join(dir, "d.sock"), bridge: fmt.Sprintf("drdk%d", os.Getpid()%100000)}
	t.Cleanup(d.cleanup)
	subnet := fmt.Sprintf("10.214.%d.1/24", os.Getpid()%250+1)
	for _, args := range [][]string{
		{"link", "add", d.bridge, "type", "bridge"},
		{"addr", "add", subnet, "dev", d.bridge},
		{"link", "set", d.bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	cfg := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.args = []string{
		"--config-file", cfg, "-H", "unix://" + d.socket,
		"--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "x"),
		"--pidfile", filepath.Join(dir, "d.pid"), "--bridge", d.bridge,
		"--iptables=false", "--ip6tables=false", "--ip-masq=false", "--live-restore",
	}
	d.log, err = os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	d.cli, err = client.NewClientWithOpts(client.WithHost("unix://"+d.socket), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	d.start()
	dockerimage.LoadInto(t, d.cli)
	return d
}

// endpoint is the daemon's address for a plugin config.
func (d *ownDockerd) endpoint() string { return "unix://" + d.socket }

// start runs dockerd and waits until it answers.
func (d *ownDockerd) start() {
	d.t.Helper()
	d.cmd = exec.Command("dockerd", d.args...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("starting dockerd: %v", err)
	}
	d.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(d.cmd, d.done)
	waitFor(d.t, 60*time.Second, func() (bool, string) {
		select {
		case err := <-d.done:
			d.done <- err
			d.t.Fatalf("dockerd exited: %v\n%s", err, d.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := d.cli.Ping(ctx)
		return err == nil, fmt.Sprintf("dockerd at %s: %v", d.socket, err)
	})
}

// stop stops dockerd gracefully (its containers live on) and waits for
// it to exit.
func (d *ownDockerd) stop() {
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
	d.cmd = nil
}

// cleanup removes every container of the daemon, stops it, unmounts what
// it left mounted under its directory and removes that and the bridge.
func (d *ownDockerd) cleanup() {
	t := d.t
	if d.cmd != nil && d.cli != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true})
		if err != nil {
			t.Errorf("listing the own dockerd's containers: %v", err)
		}
		for _, c := range list {
			if err := d.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				t.Errorf("removing container %s: %v", c.ID, err)
			}
		}
		cancel()
	}
	d.stop()
	if d.cli != nil {
		d.cli.Close()
	}
	if t.Failed() {
		t.Logf("own dockerd log:\n%s", d.logTail())
	}
	if d.log != nil {
		d.log.Close()
	}
	for _, m := range mountsUnder(d.dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", m, err)
		}
	}
	if err := os.RemoveAll(d.dir); err != nil {
		t.Errorf("removing %s: %v", d.dir, err)
	}
	if out, err := exec.Command("ip", "link", "del", d.bridge).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
		t.Errorf("removing bridge %s: %v: %s", d.bridge, err, out)
	}
}

// logTail is the end of dockerd's log.
func (d *ownDockerd) logTail() string {
	b, _ := os.ReadFile(filepath.Join(d.dir, "dockerd.log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// mountsUnder lists the mount points below dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && (fields[1] == dir || strings.HasPrefix(fields[1], dir+"/")) {
			out = append(out, fields[1])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

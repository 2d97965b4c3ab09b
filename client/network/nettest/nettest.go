// Package nettest holds what the tests of alloc networks share: a
// Manager on a bridge of the test's own, a listener inside a namespace,
// and the part of the host's state an alloc's network may change.
package nettest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/network"
)

// NewManager returns a Manager on a bridge of the test's own (its name
// and subnet chosen so as not to meet the host's or docker's), with its
// namespaces, records and CNI cache in temp dirs. The bridge and its
// address store are removed when the test ends.
func NewManager(t testing.TB, bridge, subnet string) *network.Manager {
	t.Helper()
	return NewManagerWith(t, bridge, subnet, nil)
}

// NewManagerWith is NewManager with the sandboxes of allocs with docker
// tasks.
func NewManagerWith(t testing.TB, bridge, subnet string, sandboxes network.Sandboxes) *network.Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("no CNI plugins in /usr/lib/cni")
	}
	dir := t.TempDir()
	m, err := network.NewManager(network.Config{
		CNIPath: []string{"/usr/lib/cni"}, BridgeName: bridge, BridgeSubnet: subnet,
		NetNSDir: dir + "/netns", StateDir: dir + "/state", CacheDir: dir + "/cache",
		Sandboxes: sandboxes,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", bridge).Run()
		_ = os.RemoveAll("/var/lib/cni/networks/" + bridge)
	})
	return m
}

// ListenIn opens a TCP listener on port inside the namespace at path and
// answers every connection with reply. The socket is made on a thread
// that joined the namespace; that thread is then dropped, never reused.
func ListenIn(t testing.TB, path string, port int, reply string) {
	t.Helper()
	type res struct {
		l   net.Listener
		err error
	}
	c := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with us
		f, err := os.Open(path)
		if err != nil {
			c <- res{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			c <- res{err: err}
			return
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
		c <- res{l, err}
	}()
	r := <-c
	if r.err != nil {
		t.Fatalf("listen on %d in %s: %v", port, path, r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	go func() {
		for {
			conn, err := r.l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(conn, reply)
			conn.Close()
		}
	}()
}

// Ask dials addr and returns the first line it answers, or an error.
func Ask(addr string) (string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line), err
}

// HostState is what an alloc's network may leave on the host: the
// namespaces in the manager's dir, the links on the bridge, routes and
// iptables rules naming the subnet, the bridge or a CNI chain of one
// container. Docker and other tests change the host's rules meanwhile,
// so only what can be ours is compared.
func HostState(t testing.TB, m *network.Manager) string {
	t.Helper()
	cfg := m.Config()
	var out []string
	entries, _ := os.ReadDir(cfg.NetNSDir)
	for _, e := range entries {
		out = append(out, "netns "+e.Name())
	}
	links, _ := exec.Command("ip", "-o", "link", "show", "master", cfg.BridgeName).CombinedOutput()
	for _, l := range strings.Split(strings.TrimSpace(string(links)), "\n") {
		if l != "" {
			out = append(out, "link "+strings.Fields(l)[1])
		}
	}
	routes, _ := exec.Command("ip", "route", "show", "table", "all").CombinedOutput()
	prefix := strings.SplitN(cfg.BridgeSubnet, ".", 3)
	for _, l := range strings.Split(string(routes), "\n") {
		// The bridge's own IPv6 link-local address comes when its first
		// port does, and its routes go link-down and up with its ports:
		// neither is an alloc's.
		if strings.HasPrefix(l, "local fe80::") {
			continue
		}
		l = strings.ReplaceAll(l, " linkdown", "")
		if strings.Contains(l, cfg.BridgeName) || strings.Contains(l, prefix[0]+"."+prefix[1]+".") {
			out = append(out, "route "+l)
		}
	}
	for _, table := range []string{"filter", "nat"} {
		rules, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Fatalf("iptables-save: %v: %s", err, rules)
		}
		for _, l := range strings.Split(string(rules), "\n") {
			if strings.HasPrefix(l, "#") || strings.HasPrefix(l, ":") {
				continue // comments, and chain heads with their counters
			}
			if strings.Contains(l, "CNI-DN-") || strings.Contains(l, "CNI-") && strings.Contains(l, prefix[0]+"."+prefix[1]+".") ||
				strings.Contains(l, cfg.BridgeName) {
				out = append(out, table+" "+l)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// FreePort returns a TCP port nothing on the host listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// InNS runs a command in the namespace at path.
func InNS(t testing.TB, path string, args ...string) string {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=" + path}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v in %s: %v: %s", args, path, err, out)
	}
	return string(out)
}

// Setup sets up req's network on m and tears it down when the test ends
// (with a context of its own: the test's is cancelled by then).
func Setup(t testing.TB, m *network.Manager, req network.Request) *network.Status {
	t.Helper()
	st, err := m.Setup(context.Background(), req)
	if err != nil {
		t.Fatalf("set up alloc %s's network: %v", req.AllocID, err)
	}
	t.Cleanup(func() {
		if err := m.Teardown(context.Background(), req.AllocID); err != nil {
			t.Errorf("tear down alloc %s's network: %v", req.AllocID, err)
		}
	})
	return st
}

// Get fetches url and returns its body; an answer other than 200 is an
// error.
func Get(url string) (string, error) {
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

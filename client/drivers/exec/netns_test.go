package exec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/network/nettest"
	"github.com/drover-sched/drover/structs"
)

// A task given the alloc's namespace listens there, is reached through
// the alloc's host port, sees only the alloc's interfaces, and reads the
// dns block as its /etc/resolv.conf.
func TestTaskRunsInTheAllocsNetworkNamespace(t *testing.T) {
	needRoot(t)
	m := nettest.NewManager(t, "drovt-exec", "10.251.20.0/24")
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, "cat /etc/resolv.conf; cat /proc/net/dev; exec busybox httpd -f -p 8080 -h /local")
	hostPort := nettest.FreePort(t)
	st := nettest.Setup(t, m, network.Request{
		AllocID: cfg.AllocID, Mode: network.ModeBridge,
		Ports: []structs.AllocatedPortMapping{{Label: "http", Value: hostPort, To: 8080, HostIP: "127.0.0.1"}},
		DNS:   &structs.DNSConfig{Servers: []string{"10.9.9.9"}},
	})
	cfg.NetNSPath, cfg.ResolvConfPath = st.NetNSPath, st.ResolvConf
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "index.html"), []byte(cfg.AllocID), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, d, cfg)
	waitOutput(t, stdout, "eth0")
	if out := stdout.String(); !strings.Contains(out, "nameserver 10.9.9.9") {
		t.Fatalf("the task's resolv.conf is not the dns block's:\n%s", out)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", hostPort)
	var body string
	testutil.WaitFor(t, "the task answers on its host port", func() bool {
		var err error
		body, err = nettest.Get(url)
		return err == nil
	})
	if body != cfg.AllocID {
		t.Fatalf("%s answered %q, want the alloc's page %q", url, body, cfg.AllocID)
	}
	onlyAllocs := func(what, out string) {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if name, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && name != "lo" && name != "eth0" && !strings.Contains(name, " ") {
				t.Fatalf("%s sees interface %q, which is not the alloc's:\n%s", what, name, out)
			}
		}
	}
	onlyAllocs("the task", stdout.String())
	// A command run inside the task (alloc exec, script checks) joins the
	// alloc's network too, not the host's.
	var out bytes.Buffer
	if code, err := d.ExecTask(context.Background(), cfg.ID, "/bin/cat", []string{"/proc/net/dev"}, &out); err != nil || code != 0 || !strings.Contains(out.String(), "eth0") {
		t.Fatalf("ExecTask: code %d, err %v, output %q", code, err, out.String())
	}
	onlyAllocs("a command run inside the task", out.String())
}

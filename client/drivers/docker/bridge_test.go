package docker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/network/nettest"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// A docker task of an alloc in bridge mode joins the alloc's pause
// container: it is reached through the alloc's host port (mapped by CNI,
// not published by Docker), reads the group's dns block, and shares its
// network with an exec task of the alloc, which joins the pinned
// namespace by path. Teardown removes the pause container.
func TestDockerTaskJoinsTheAllocsSandboxNetwork(t *testing.T) {
	d, cli := newTestDriver(t, func(o *Options) { o.Config.InfraImage = dockerimage.EnsurePause(t) })
	m := nettest.NewManagerWith(t, "drovt-dock", "10.251.21.0/24", d)
	tt := newTestTask(t, cli, shell(`cat /etc/resolv.conf; echo page-of-docker > /local/index.html; exec httpd -f -p 8080 -h /local`))
	tt.cfg.Config["ports"] = []any{"http"}
	host := nettest.FreePort(t)
	tt.cfg.Resources.Ports = []structs.AllocatedPortMapping{{Label: "http", Value: host, To: 8080, HostIP: "127.0.0.1"}}
	st := nettest.Setup(t, m, network.Request{
		AllocID: tt.cfg.AllocID, Mode: network.ModeBridge, Sandbox: true,
		Ports: tt.cfg.Resources.Ports, DNS: &structs.DNSConfig{Servers: []string{"10.9.9.9"}, Searches: []string{"svc.test"}},
	})
	tt.cfg.NetNSPath = st.NetNSPath
	h := start(t, d, tt)
	info := inspect(t, cli, h)
	if want := "container:"; !strings.HasPrefix(string(info.HostConfig.NetworkMode), want) || len(info.HostConfig.PortBindings) != 0 {
		t.Fatalf("network mode %q, port bindings %v: want the sandbox's network and nothing published", info.HostConfig.NetworkMode, info.HostConfig.PortBindings)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", host)
	var body string
	waitFor(t, "the task to answer on the alloc's host port", 20*time.Second, func() bool {
		var err error
		body, err = nettest.Get(url)
		return err == nil
	})
	if strings.TrimSpace(body) != "page-of-docker" {
		t.Fatalf("%s answered %q", url, body)
	}
	// The output reaches stdout through the log copy, which may come
	// after the answer.
	wait.For(t, 20*time.Second, func() (bool, string) {
		out := tt.stdout.String()
		return strings.Contains(out, "nameserver 10.9.9.9") && strings.Contains(out, "search svc.test"),
			"the task's resolv.conf is not the dns block's:\n" + out
	}, wait.Every(20*time.Millisecond))
	// The pinned namespace is the container's: a listener there is
	// what the task sees on its loopback.
	nettest.ListenIn(t, st.NetNSPath, 9090, "from-the-pinned-namespace")
	var out bytes.Buffer
	if _, err := d.ExecTask(context.Background(), tt.cfg.ID, "/bin/sh", []string{"-c", "nc 127.0.0.1 9090 </dev/null"}, &out); err != nil || !strings.Contains(out.String(), "from-the-pinned-namespace") {
		t.Fatalf("the docker task does not share the pinned namespace: nc said %q (%v)", out.String(), err)
	}

	if err := d.DestroyTask(tt.cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := m.Teardown(context.Background(), tt.cfg.AllocID); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerInspect(context.Background(), SandboxName(tt.cfg.AllocID)); err == nil {
		t.Fatal("the pause container is still there after teardown")
	}
}

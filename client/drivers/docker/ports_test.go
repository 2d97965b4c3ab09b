package docker

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// freePort returns a port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestPortsArePublishedToTheirToPort(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	host := freePort(t)
	tt := newTestTask(t, cli, shell(`echo hello-from-docker > /local/index.html; exec httpd -f -p 8080 -h /local`))
	tt.cfg.Config["ports"] = []any{"http"}
	tt.cfg.Resources.Ports = []structs.AllocatedPortMapping{{Label: "http", Value: host, To: 8080, HostIP: "127.0.0.1"}}
	h := start(t, d, tt)
	info := inspect(t, cli, h)
	b := info.HostConfig.PortBindings["8080/tcp"]
	if len(b) != 1 || b[0].HostIP != "127.0.0.1" || b[0].HostPort != strconv.Itoa(host) {
		t.Fatalf("8080/tcp bindings = %+v, want 127.0.0.1:%d", b, host)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(host) + "/index.html"
	var body string
	waitFor(t, "the task's server to answer on its host port", 20*time.Second, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		body = string(data)
		return resp.StatusCode == http.StatusOK
	})
	if strings.TrimSpace(body) != "hello-from-docker" {
		t.Fatalf("body = %q", body)
	}
}

func TestPortWithoutToMapsToTheSamePort(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	host := freePort(t)
	tt := newTestTask(t, cli, shell("sleep 30"))
	tt.cfg.Config["ports"] = []any{"db"}
	tt.cfg.Resources.Ports = []structs.AllocatedPortMapping{{Label: "db", Value: host, To: -1, HostIP: "127.0.0.1"}}
	h := start(t, d, tt)
	info := inspect(t, cli, h)
	key := strconv.Itoa(host) + "/udp"
	for port, b := range info.HostConfig.PortBindings {
		if string(port) == key && len(b) == 1 && b[0].HostPort == strconv.Itoa(host) {
			return
		}
	}
	t.Fatalf("bindings = %+v, want %s to host port %d", info.HostConfig.PortBindings, key, host)
}

func TestUnknownPortLabelIsRefusedBeforeCreating(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell("true"))
	tt.cfg.Config["ports"] = []any{"htp"}
	tt.cfg.Resources.Ports = []structs.AllocatedPortMapping{{Label: "http", Value: 20000}}
	_, err := d.StartTask(tt.cfg)
	if err == nil || !strings.Contains(err.Error(), `"htp"`) || !strings.Contains(err.Error(), "http") {
		t.Fatalf("StartTask = %v, want an error naming the label and the known ones", err)
	}
}

func TestNetworkModeReachesTheContainer(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	for _, mode := range []string{"host", "none"} {
		t.Run(mode, func(t *testing.T) {
			tt := newTestTask(t, cli, shell("sleep 30"))
			tt.cfg.Config["network_mode"] = mode
			h := start(t, d, tt)
			if got := string(inspect(t, cli, h).HostConfig.NetworkMode); got != mode {
				t.Fatalf("network mode = %q, want %q", got, mode)
			}
		})
	}
}

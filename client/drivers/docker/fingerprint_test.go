package docker

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

func TestFingerprintReportsTheDaemon(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	v, err := cli.ServerVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	info := d.Fingerprint()
	if !info.Detected || !info.Healthy {
		t.Fatalf("fingerprint = %+v, want detected and healthy", info)
	}
	if info.Attributes["version"] != v.Version || info.Attributes["os_type"] != "linux" || !strings.Contains(info.Attributes["runtimes"], "runc") {
		t.Fatalf("attributes = %v, want version %s, os_type linux, runtimes with runc", info.Attributes, v.Version)
	}
	if c := d.Capabilities(); c.FSIsolation != drivers.FSIsolationImage || c.HostEnv {
		t.Fatalf("capabilities = %+v", c)
	}
}

func TestFingerprintOfAnUnreachableDaemonIsUnhealthy(t *testing.T) {
	cfg := testConfig()
	cfg.Endpoint = "unix://" + t.TempDir() + "/no-docker.sock"
	d := New(Options{Config: cfg})
	t.Cleanup(d.Shutdown)
	info := d.Fingerprint()
	if !info.Detected || info.Healthy || !strings.Contains(info.HealthDescription, "no-docker.sock") {
		t.Fatalf("fingerprint = %+v, want detected, unhealthy, naming the socket", info)
	}
	if len(info.Attributes) != 0 {
		t.Fatalf("an unreachable daemon advertised %v", info.Attributes)
	}
}

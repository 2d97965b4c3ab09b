package docker

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
)

// stallingRegistry answers the registry API's version check and then
// never answers a manifest request, as a registry that hangs mid-pull.
func stallingRegistry(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
			w.WriteHeader(http.StatusOK)
			return
		}
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return l.Addr().String()
}

func TestPullDeadlines(t *testing.T) {
	cases := []struct {
		name     string
		activity time.Duration
		timeout  string
		want     string
	}{
		{"no progress for pull_activity_timeout", time.Second, "5m", "made no progress for 1s (plugin config pull_activity_timeout)"},
		{"not done within image_pull_timeout", time.Hour, "1s", "did not finish within image_pull_timeout 1s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, cli := newTestDriver(t, func(o *Options) { o.Config.PullActivityTimeout = c.activity })
			ref := stallingRegistry(t) + "/drover/stalls:1"
			tt := newTestTask(t, cli, map[string]any{"image": ref, "command": "true", "image_pull_timeout": c.timeout})
			began := time.Now()
			_, err := d.StartTask(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), `pulling image "`+ref+`"`) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("StartTask = %v, want an error naming the image and %q", err, c.want)
			}
			if !drivers.IsRecoverable(err) {
				t.Fatalf("a stalled pull is not worth a retry under the restart policy: %v", err)
			}
			if time.Since(began) > 30*time.Second {
				t.Fatalf("the pull gave up only after %v", time.Since(began))
			}
		})
	}
}

func TestCPUHardLimitIsAQuotaOfTheNode(t *testing.T) {
	d, cli := newTestDriver(t, func(o *Options) { o.NodeCPU = func() (int64, int) { return 4000, 2 } })
	tt := newTestTask(t, cli, shell("sleep 30"))
	tt.cfg.Config["cpu_hard_limit"] = true
	tt.cfg.Resources.CPUShares = 1000
	h := start(t, d, tt)
	hc := inspect(t, cli, h).HostConfig
	// 1000 of 4000 MHz over 2 cores: half a core.
	if hc.CPUPeriod != 100000 || hc.CPUQuota != 50000 {
		t.Fatalf("period %d quota %d, want 100000 and 50000", hc.CPUPeriod, hc.CPUQuota)
	}
}

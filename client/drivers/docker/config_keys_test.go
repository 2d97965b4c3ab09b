package docker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/drover-sched/drover/client/drivers"
)

// Each key that changes the container is set through the driver and read
// back from the daemon.
func TestTaskConfigKeysReachTheContainer(t *testing.T) {
	d, cli := newTestDriver(t, func(o *Options) {
		o.Config.VolumesEnabled = true
		o.Config.AllowPrivileged = true
		o.Config.AllowCaps = append(slices.Clone(DefaultAllowCaps), "sys_time")
	})
	// After every subtest's container is gone.
	t.Cleanup(func() { _ = cli.VolumeRemove(context.Background(), "drover-test-vol", true) })
	cases := []struct {
		name   string
		config map[string]any
		check  func(t *testing.T, tt *testTask, info container.InspectResponse)
	}{
		{"hostname", map[string]any{"hostname": "cache-1"}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			if i.Config.Hostname != "cache-1" {
				t.Errorf("hostname = %q", i.Config.Hostname)
			}
		}},
		{"dns", map[string]any{"dns_servers": []any{"10.0.0.53"}, "dns_search_domains": []any{"corp.example"}, "dns_options": []any{"ndots:2"}}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			if !slices.Equal(i.HostConfig.DNS, []string{"10.0.0.53"}) || !slices.Equal(i.HostConfig.DNSSearch, []string{"corp.example"}) || !slices.Equal(i.HostConfig.DNSOptions, []string{"ndots:2"}) {
				t.Errorf("dns = %v %v %v", i.HostConfig.DNS, i.HostConfig.DNSSearch, i.HostConfig.DNSOptions)
			}
		}},
		{"extra_hosts", map[string]any{"extra_hosts": []any{"db.internal:10.1.2.3"}}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			if !slices.Equal(i.HostConfig.ExtraHosts, []string{"db.internal:10.1.2.3"}) {
				t.Errorf("extra hosts = %v", i.HostConfig.ExtraHosts)
			}
		}},
		{"volumes relative to the task dir", map[string]any{"volumes": []any{"local/conf:/etc/app:ro"}}, func(t *testing.T, tt *testTask, i container.InspectResponse) {
			want := filepath.Join(tt.cfg.TaskDir, "local/conf") + ":/etc/app:ro"
			if !slices.Contains(i.HostConfig.Binds, want) {
				t.Errorf("binds = %v, want %s", i.HostConfig.Binds, want)
			}
		}},
		{"mount blocks", map[string]any{"mount": []map[string]any{
			{"type": "tmpfs", "target": "/scratch", "tmpfs_options": []map[string]any{{"size": 1 << 20}}},
			{"type": "bind", "source": "local", "target": "/data", "readonly": true},
			{"type": "volume", "source": "drover-test-vol", "target": "/vol"},
		}}, func(t *testing.T, tt *testTask, i container.InspectResponse) {
			m := i.HostConfig.Mounts
			if len(m) != 3 || m[0].Type != mount.TypeTmpfs || m[0].TmpfsOptions == nil || m[0].TmpfsOptions.SizeBytes != 1<<20 ||
				m[1].Type != mount.TypeBind || m[1].Source != filepath.Join(tt.cfg.TaskDir, "local") || !m[1].ReadOnly ||
				m[2].Type != mount.TypeVolume || m[2].Source != "drover-test-vol" {
				t.Errorf("mounts = %+v", m)
			}
		}},
		{"cap_add and cap_drop, and NET_RAW dropped by default", map[string]any{"cap_add": []any{"SYS_TIME"}, "cap_drop": []any{"chown"}}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			add, drop := capNames(i.HostConfig.CapAdd), capNames(i.HostConfig.CapDrop)
			if !slices.Contains(add, "sys_time") || !slices.Contains(drop, "chown") || !slices.Contains(drop, "net_raw") {
				t.Errorf("cap add %v drop %v", i.HostConfig.CapAdd, i.HostConfig.CapDrop)
			}
		}},
		{"cpuset, ulimit, shm_size, sysctl", map[string]any{"cpuset_cpus": "0", "ulimit": []map[string]any{{"nofile": "1024:2048"}}, "shm_size": 8 << 20, "sysctl": map[string]any{"net.core.somaxconn": "512"}}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			hc := i.HostConfig
			if hc.CpusetCpus != "0" || hc.ShmSize != 8<<20 || hc.Sysctls["net.core.somaxconn"] != "512" ||
				len(hc.Ulimits) != 1 || hc.Ulimits[0].Name != "nofile" || hc.Ulimits[0].Soft != 1024 || hc.Ulimits[0].Hard != 2048 {
				t.Errorf("host config = cpuset %q shm %d sysctl %v ulimits %+v", hc.CpusetCpus, hc.ShmSize, hc.Sysctls, hc.Ulimits)
			}
		}},
		{"security_opt, readonly_rootfs, init", map[string]any{"security_opt": []any{"no-new-privileges"}, "readonly_rootfs": true, "init": true}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			hc := i.HostConfig
			if !slices.Contains(hc.SecurityOpt, "no-new-privileges") || !hc.ReadonlyRootfs || hc.Init == nil || !*hc.Init {
				t.Errorf("security %v readonly %v init %v", hc.SecurityOpt, hc.ReadonlyRootfs, hc.Init)
			}
		}},
		{"logging", map[string]any{"logging": []map[string]any{{"type": "json-file", "config": []map[string]any{{"max-size": "1m"}}}}}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			if i.HostConfig.LogConfig.Type != "json-file" || i.HostConfig.LogConfig.Config["max-size"] != "1m" {
				t.Errorf("log config = %+v", i.HostConfig.LogConfig)
			}
		}},
		{"healthchecks disable", map[string]any{"healthchecks": map[string]any{"disable": true}}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			if i.Config.Healthcheck == nil || !slices.Equal(i.Config.Healthcheck.Test, []string{"NONE"}) {
				t.Errorf("healthcheck = %+v", i.Config.Healthcheck)
			}
		}},
		{"user", map[string]any{}, func(t *testing.T, _ *testTask, i container.InspectResponse) {
			if i.Config.User != "nobody" {
				t.Errorf("user = %q", i.Config.User)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := shell("sleep 30")
			for k, v := range c.config {
				cfg[k] = v
			}
			tt := newTestTask(t, cli, cfg)
			if c.name == "user" {
				tt.cfg.User = "nobody"
			}
			if err := os.MkdirAll(filepath.Join(tt.cfg.TaskDir, "local", "conf"), 0o755); err != nil {
				t.Fatal(err)
			}
			h := start(t, d, tt)
			c.check(t, tt, inspect(t, cli, h))
		})
	}
}

func TestPluginConfigRefusesWhatItDoesNotAllow(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	cases := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"privileged", map[string]any{"privileged": true}, "allow_privileged"},
		{"a capability outside allow_caps", map[string]any{"cap_add": []any{"sys_admin"}}, `cap_add "sys_admin" is not allowed`},
		{"a host path without volumes", map[string]any{"volumes": []any{"/etc:/host-etc"}}, "volumes are disabled"},
		{"a named volume mount without volumes", map[string]any{"mount": []map[string]any{{"type": "volume", "source": "v", "target": "/v"}}}, "volumes are disabled"},
		{"a relative path leaving the alloc dir", map[string]any{"volumes": []any{"../../../etc:/x"}}, "leaves the alloc directory"},
		{"an unknown key", map[string]any{"comand": "x"}, `unknown config key "comand"; did you mean "command"?`},
		{"an unknown nested key", map[string]any{"mount": []map[string]any{{"targt": "/x"}}}, `unknown config key "mount[0].targt"; did you mean "mount[0].target"?`},
		{"devices, which Drover does not offer", map[string]any{"devices": []map[string]any{{"host_path": "/dev/sda"}}}, `unknown config key "devices"`},
		{"a runtime, which Drover does not offer", map[string]any{"runtime": "runc"}, `unknown config key "runtime"`},
		{"a bad ulimit", map[string]any{"ulimit": map[string]any{"nofile": "lots"}}, `ulimit "nofile"`},
		{"no image", map[string]any{"image": ""}, `"image" is missing`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := shell("true")
			for k, v := range c.config {
				cfg[k] = v
			}
			tt := newTestTask(t, cli, cfg)
			_, err := d.StartTask(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("StartTask = %v, want an error containing %q", err, c.want)
			}
			list, _ := cli.ContainerList(t.Context(), container.ListOptions{All: true})
			for _, ct := range list {
				if ct.Labels[LabelAllocID] == tt.cfg.AllocID {
					t.Fatalf("a refused start left container %s", ct.ID)
				}
			}
		})
	}
}

func TestPullOfAMissingImageNamesTheImage(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, map[string]any{"image": "127.0.0.1:1/drover/none:1", "command": "true", "image_pull_timeout": "20s"})
	_, err := d.StartTask(tt.cfg)
	if err == nil || !strings.Contains(err.Error(), `pulling image "127.0.0.1:1/drover/none:1"`) {
		t.Fatalf("StartTask = %v, want a pull error naming the image", err)
	}
}

// capNames normalises the daemon's capability names (CAP_CHOWN or CHOWN,
// depending on its version).
func capNames(caps []string) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = normCap(c)
	}
	return out
}

// Privileged containers cannot start where the agent itself lacks
// capabilities (as in a container), so the spec is checked, not the
// daemon.
func TestPrivilegedIsPassedWhenAllowed(t *testing.T) {
	d := New(Options{Config: func() PluginConfig { c := testConfig(); c.AllowPrivileged = true; return c }()})
	t.Cleanup(d.Shutdown)
	tc, err := ParseTaskConfig(map[string]any{"image": "x", "privileged": true})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := d.buildSpec(&drivers.TaskConfig{ID: "a/web/1", AllocID: "a", TaskName: "web"}, tc)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.HostConfig.Privileged || len(spec.HostConfig.CapDrop) != 0 {
		t.Fatalf("privileged = %v, cap drop = %v", spec.HostConfig.Privileged, spec.HostConfig.CapDrop)
	}
}

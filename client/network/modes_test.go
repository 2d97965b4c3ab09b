package network_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/client/network"
)

// A client advertises a mode only when every plugin it runs is in
// cni_path: bridge needs five, none loopback alone, and each named
// network its own list.
func TestModesFollowThePluginsAndNetworksPresent(t *testing.T) {
	bin, conf := t.TempDir(), t.TempDir()
	plugin := func(name string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conflist := func(file, name, pluginType string) {
		body := `{"cniVersion": "0.4.0", "name": "` + name + `", "plugins": [{"type": "` + pluginType + `"}]}`
		if err := os.WriteFile(filepath.Join(conf, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	modes := func() []string {
		m, err := network.NewManager(network.Config{CNIPath: []string{bin}, CNIConfigDir: conf, StateDir: t.TempDir()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Modes()
	}
	if got := modes(); len(got) != 0 {
		t.Fatalf("no plugins: modes %v, want none", got)
	}
	plugin("loopback")
	conflist("10-overlay.conflist", "overlay", "macvlan")
	conflist("20-lo.conflist", "lo-only", "loopback")
	if got, want := modes(), []string{"none", "cni/lo-only"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("loopback alone: modes %v, want %v", got, want)
	}
	for _, p := range []string{"bridge", "host-local", "firewall", "portmap", "macvlan"} {
		plugin(p)
	}
	if got, want := modes(), []string{"bridge", "none", "cni/lo-only", "cni/overlay"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("every plugin: modes %v, want %v", got, want)
	}
}

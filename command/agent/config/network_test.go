package config

import (
	"slices"
	"strings"
	"testing"
)

// The client's CNI keys reach the client's network config, with Nomad's
// names, instead of being ignored.
func TestCNIKeysReachTheClient(t *testing.T) {
	c, warnings, err := Parse("agent.hcl", []byte(`
client {
  enabled                     = true
  cni_path                    = "/usr/lib/cni:/opt/cni/bin"
  cni_config_dir              = "/etc/cni/net.d"
  bridge_network_name         = "drover0"
  bridge_network_subnet       = "10.99.0.0/16"
  bridge_network_hairpin_mode = true
}
`))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings %v", warnings)
	}
	n := Default().Merge(c).ForClient("/data", nil, "", nil).Network
	if !slices.Equal(n.CNIPath, []string{"/usr/lib/cni", "/opt/cni/bin"}) || n.CNIConfigDir != "/etc/cni/net.d" ||
		n.BridgeName != "drover0" || n.BridgeSubnet != "10.99.0.0/16" || !n.HairpinMode {
		t.Fatalf("client network config %+v", n)
	}
}

// A bad value is an error naming the key and what would be right.
func TestBadCNIKeysAreRefusedByName(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`bridge_network_subnet = "10.99.0.0"`, "bridge_network_subnet: \"10.99.0.0\" is not an IPv4 CIDR"},
		{`bridge_network_subnet = "10.99.0.0/31"`, "leaves no room"},
		{`bridge_network_name = "a/b"`, "bridge_network_name: \"a/b\" is not a network device name"},
		{`cni_path = "/usr/lib/cni:relative"`, "cni_path: \"relative\" is not an absolute directory"},
		{`cni_config_dir = "conf"`, "cni_config_dir: \"conf\" is not an absolute directory"},
	} {
		_, _, err := Parse("agent.hcl", []byte("client {\n"+tc.body+"\n}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
}

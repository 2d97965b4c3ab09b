package network

import (
	"encoding/json"
	"net/netip"
)

// bridgeConfList is the conflist of mode "bridge", in the shape Nomad's
// client uses, so that an operator's knowledge (and firewall rules keyed
// on its chains) carries over:
//
//   - loopback brings lo up in the namespace;
//   - bridge attaches a veth to the host bridge, makes it the gateway and
//     masquerades traffic leaving the subnet; host-local hands out
//     addresses from the subnet;
//   - firewall lets the alloc's traffic through the FORWARD chain, with an
//     admin chain (NOMAD-ADMIN) for the operator's own rules;
//   - portmap maps the alloc's ports from the host. With snat it
//     masquerades connections that come from the host itself, and marks
//     the bridge route_localnet, so 127.0.0.1:<host port> reaches the
//     alloc too.
func bridgeConfList(name, subnet string, hairpin bool) []byte {
	pfx := netip.MustParsePrefix(subnet).Masked()
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       name,
		"plugins": []any{
			map[string]any{"type": "loopback"},
			map[string]any{
				"type":         "bridge",
				"bridge":       name,
				"ipMasq":       true,
				"isGateway":    true,
				"forceAddress": true,
				"hairpinMode":  hairpin,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": [][]map[string]string{{{"subnet": pfx.String()}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{
				"type":                   "firewall",
				"backend":                "iptables",
				"iptablesAdminChainName": "NOMAD-ADMIN",
			},
			map[string]any{
				"type":         "portmap",
				"capabilities": map[string]bool{"portMappings": true},
				"snat":         true,
			},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return b
}

// noneConfList is mode "none": an empty namespace whose loopback is up.
func noneConfList() []byte {
	return []byte(`{"cniVersion": "0.4.0", "name": "drover-none", "plugins": [{"type": "loopback"}]}`)
}

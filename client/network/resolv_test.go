package network

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestResolvConfReplacesOnlyWhatTheDNSBlockSets(t *testing.T) {
	host := []byte("# generated\nnameserver 192.0.2.1\nnameserver 192.0.2.2\nsearch corp.example\noptions edns0\n")
	for _, tc := range []struct {
		name string
		dns  structs.DNSConfig
		want string
	}{
		{"servers replace the host's servers and keep the rest", structs.DNSConfig{Servers: []string{"10.0.0.53"}},
			"search corp.example\noptions edns0\nnameserver 10.0.0.53\n"},
		{"searches alone keep the host's servers", structs.DNSConfig{Searches: []string{"svc.local", "local"}},
			"nameserver 192.0.2.1\nnameserver 192.0.2.2\noptions edns0\nsearch svc.local local\n"},
		{"every field set replaces every line", structs.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"a"}, Options: []string{"ndots:2"}},
			"nameserver 10.0.0.53\nsearch a\noptions ndots:2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(resolvConf(&tc.dns, host)); got != tc.want {
				t.Fatalf("resolv.conf:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// The bridge conflist carries the client's bridge settings.
func TestBridgeConfListCarriesTheClientsSettings(t *testing.T) {
	var conf struct {
		Name    string
		Plugins []map[string]any
	}
	if err := json.Unmarshal(bridgeConfList("br0", "10.1.2.3/24", true), &conf); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range conf.Plugins {
		types = append(types, p["type"].(string))
	}
	if conf.Name != "br0" || strings.Join(types, ",") != "loopback,bridge,firewall,portmap" {
		t.Fatalf("conflist %q with plugins %v", conf.Name, types)
	}
	br := conf.Plugins[1]
	ipam, _ := json.Marshal(br["ipam"])
	if br["bridge"] != "br0" || br["hairpinMode"] != true || !strings.Contains(string(ipam), `"subnet":"10.1.2.0/24"`) {
		t.Fatalf("bridge plugin %v", br)
	}
}

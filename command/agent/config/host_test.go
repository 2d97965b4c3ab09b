package config

import (
	"strings"
	"testing"
)

func TestHostVolumeAndNetworkBlocksReachTheClient(t *testing.T) {
	src := `
client {
  enabled = true
  servers = ["127.0.0.1:4647"]
  host_volume "data" {
    path = "/srv/data"
  }
  host_volume "certs" {
    path      = "/etc/ssl/certs"
    read_only = true
  }
  host_network "private" {
    cidr           = "10.0.0.0/8"
    reserved_ports = "22,8000-8010"
  }
  host_network "backend" {
    interface = "eth1"
  }
}
`
	c, warnings, err := Parse("agent.hcl", []byte(src))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %q", err, warnings)
	}
	cc := c.ForClient(t.TempDir(), nil, "", nil)
	if v := cc.HostVolumes["data"]; v == nil || v.Path != "/srv/data" || v.ReadOnly {
		t.Fatalf("data: %+v", v)
	}
	if v := cc.HostVolumes["certs"]; v == nil || v.Path != "/etc/ssl/certs" || !v.ReadOnly || v.Name != "certs" {
		t.Fatalf("certs: %+v", v)
	}
	if n := cc.HostNetworks["private"]; n == nil || n.CIDR != "10.0.0.0/8" || n.ReservedPorts != "22,8000-8010" || n.Interface != "" {
		t.Fatalf("private: %+v", n)
	}
	if n := cc.HostNetworks["backend"]; n == nil || n.Interface != "eth1" || n.CIDR != "" {
		t.Fatalf("backend: %+v", n)
	}
}

func TestLaterFilesReplaceHostVolumesByName(t *testing.T) {
	a, _, err := Parse("a.hcl", []byte(`client {
  host_volume "data" { path = "/a" }
  host_volume "logs" { path = "/logs" }
}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Parse("b.hcl", []byte(`client {
  host_volume "data" {
    path      = "/b"
    read_only = true
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	m := a.Merge(b)
	if v := m.Client.HostVolumes["data"]; v.Path != "/b" || !v.ReadOnly {
		t.Fatalf("data: %+v", v)
	}
	if v := m.Client.HostVolumes["logs"]; v == nil || v.Path != "/logs" {
		t.Fatalf("logs lost in the merge: %+v", m.Client.HostVolumes)
	}
	if a.Client.HostVolumes["data"].Path != "/a" {
		t.Fatal("merge changed its input")
	}
}

func TestBadHostVolumeAndNetworkBlocksAreErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"a volume without path", `host_volume "data" {}`, `client.host_volume.data.path: is missing`},
		{"a relative path", `host_volume "data" { path = "srv" }`, `client.host_volume.data.path: "srv" must be an absolute path`},
		{"a bad volume name", `host_volume "da ta" { path = "/srv" }`, `client.host_volume: name "da ta" must be`},
		{"read_only not a bool", `host_volume "data" {
  path      = "/srv"
  read_only = "yes"
}`, `client.host_volume.data.read_only: expected true or false`},
		{"a volume declared twice", `host_volume "data" { path = "/a" }
host_volume "data" { path = "/b" }`, `client.host_volume: "data" is declared twice`},
		{"a network without cidr or interface", `host_network "private" {}`, `client.host_network.private: set cidr`},
		{"a network with both", `host_network "private" {
  cidr      = "10.0.0.0/8"
  interface = "eth1"
}`, `set only one of cidr and interface`},
		{"a bad cidr", `host_network "private" { cidr = "10.0.0.0" }`, `cidr "10.0.0.0" is not a CIDR`},
		{"bad reserved ports", `host_network "private" {
  cidr           = "10.0.0.0/8"
  reserved_ports = "x"
}`, `client.host_network.private.reserved_ports: expected ports such as`},
		{"the default network cannot be redefined", `host_network "default" { cidr = "10.0.0.0/8" }`, `and not "default"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("agent.hcl", []byte("client {\n"+tc.body+"\n}\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

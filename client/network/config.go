package network

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// Defaults, as in Nomad's client.
const (
	DefaultCNIPath      = "/opt/cni/bin:/usr/lib/cni"
	DefaultCNIConfigDir = "/opt/cni/config"
	DefaultBridgeName   = "nomad"
	DefaultBridgeSubnet = "172.26.64.0/20"
	// DefaultNetNSDir is where namespaces are pinned: where `ip netns`
	// looks, so an operator can inspect an alloc's network with it.
	DefaultNetNSDir = "/var/run/netns"
)

// Config is the client's CNI configuration.
type Config struct {
	// CNIPath lists the directories searched for plugins.
	CNIPath []string
	// CNIConfigDir holds the conflists that `cni/<name>` modes name.
	CNIConfigDir string
	// BridgeName is the bridge device (and CNI network name) of "bridge".
	BridgeName string
	// BridgeSubnet is the IPv4 range bridge-mode allocs get addresses from.
	BridgeSubnet string
	// HairpinMode lets an alloc reach itself through its own host port.
	HairpinMode bool
	// NetNSDir is where namespaces are pinned (DefaultNetNSDir).
	NetNSDir string
	// StateDir holds the records (record.go): the client's own, in its
	// data dir.
	StateDir string
	// CacheDir is libcni's result cache; empty means libcni's default
	// (/var/lib/cni).
	CacheDir string
	// Sandboxes makes the namespaces of allocs with docker tasks (the
	// docker driver's pause containers); nil when docker is not loaded.
	Sandboxes Sandboxes
}

// Sandboxes makes and removes an alloc's sandbox: a process of a runtime
// that must own the alloc's namespace itself (Docker can only join a
// container's network, never a path). The Manager pins the sandbox's
// namespace and attaches it like one of its own, so every task of the
// alloc, docker's or exec's, shares it.
type Sandboxes interface {
	// CreateSandbox starts the alloc's sandbox, with the group's dns
	// block, and returns its network namespace's path.
	CreateSandbox(allocID string, dns *structs.DNSConfig) (string, error)
	// DestroySandbox removes it; a sandbox that is gone is no error.
	DestroySandbox(allocID string) error
}

// SplitCNIPath turns a cni_path value ("a:b" or "a,b") into directories.
func SplitCNIPath(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' }) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// withDefaults fills the empty fields and checks the rest, naming the
// client config key that is wrong.
func (c Config) withDefaults() (Config, error) {
	if len(c.CNIPath) == 0 {
		c.CNIPath = SplitCNIPath(DefaultCNIPath)
	}
	if c.CNIConfigDir == "" {
		c.CNIConfigDir = DefaultCNIConfigDir
	}
	if c.BridgeName == "" {
		c.BridgeName = DefaultBridgeName
	}
	if c.BridgeSubnet == "" {
		c.BridgeSubnet = DefaultBridgeSubnet
	}
	if c.NetNSDir == "" {
		c.NetNSDir = DefaultNetNSDir
	}
	if err := ValidateBridge(c.BridgeName, c.BridgeSubnet); err != nil {
		return c, err
	}
	if c.StateDir == "" {
		return c, fmt.Errorf("network: no state dir for the alloc network records")
	}
	for _, p := range c.CNIPath {
		if !filepath.IsAbs(p) {
			return c, fmt.Errorf("cni_path: %q is not an absolute directory", p)
		}
	}
	return c, nil
}

// ValidateBridge checks bridge_network_name and bridge_network_subnet.
func ValidateBridge(name, subnet string) error {
	if name != "" && (len(name) > 15 || strings.ContainsAny(name, "/ \t\n:")) {
		return fmt.Errorf("bridge_network_name: %q is not a network device name (at most 15 characters, no '/', ':' or spaces)", name)
	}
	if subnet == "" {
		return nil
	}
	pfx, err := netip.ParsePrefix(subnet)
	if err != nil || !pfx.Addr().Is4() {
		return fmt.Errorf("bridge_network_subnet: %q is not an IPv4 CIDR such as %s", subnet, DefaultBridgeSubnet)
	}
	if pfx.Bits() > 30 {
		return fmt.Errorf("bridge_network_subnet: %q leaves no room for allocs (want a prefix of /30 or shorter)", subnet)
	}
	return nil
}

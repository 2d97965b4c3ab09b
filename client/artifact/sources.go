package artifact

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// The client settings that widen what a Fetcher may read, as refusals
// name them. The agent decodes them from the client's artifact block.
const (
	SettingAllowedLocalPaths = "client.artifact.allowed_local_paths"
	SettingDisableIsolation  = "client.artifact.disable_filesystem_isolation"
	SettingAllowedHosts      = "client.artifact.allowed_hosts"
	SettingDenyPrivate       = "client.artifact.deny_private_networks"
)

// Sources says where one client's artifacts may come from. A job is
// written by whoever may submit jobs, and its artifacts are fetched by the
// client agent, with the agent's file permissions and from the agent's
// place in the network; so the zero value allows only what the job's own
// allocation could reach anyway:
//
//   - local files (file:// URLs and absolute paths) only from inside the
//     allocation's own directory;
//   - http(s) sources anywhere but on a loopback, link-local (169.254.0.0/16
//     and fe80::/10, so the cloud metadata service too), unspecified or
//     multicast address, an address of this machine, or the agent's own
//     HTTP and RPC listeners.
//
// Private networks (10/8, 172.16/12, 192.168/16, fc00::/7) are allowed
// unless DenyPrivate is set: artifact stores commonly live there, as Nomad
// users expect, and a task on the node reaches them just as well. Cloud
// metadata addresses inside them (AWS's fd00:ec2::254) are refused as
// link-local ones are.
//
// Addresses are checked as they are dialled, on every connection,
// redirects included, so a host name that resolves to a refused address
// (even one that answered differently a moment earlier) is refused too.
type Sources struct {
	// AnyLocalPath lets local sources be read anywhere the agent can read
	// (disable_filesystem_isolation).
	AnyLocalPath bool
	// LocalPaths are directories whose files local sources may read, as
	// well as the allocation's (allowed_local_paths). A symlink inside
	// one may not lead out of it.
	LocalPaths []string
	// LocalFiles are single files local sources may read
	// (filesystem_isolation_extra_paths' "f:r:" grants).
	LocalFiles []string
	// AllowedHosts may be fetched from whatever their address
	// (allowed_hosts); see ParseHostRule.
	AllowedHosts []HostRule
	// DenyPrivate refuses private-network addresses too
	// (deny_private_networks).
	DenyPrivate bool
	// OwnAddrs are the agent's own listeners. An unspecified IP
	// (0.0.0.0, ::) stands for every address of this machine.
	OwnAddrs []netip.AddrPort
	// UseProxy sends requests through the proxy that the agent's
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY name. Without it no proxy is
	// used, as Nomad's artifact sandbox passes no variable it is not told
	// to.
	UseProxy bool
}

// HostRule is one allowed_hosts entry: an IP address ("127.0.0.1"), a
// network ("10.1.0.0/16"), or a host name ("artifacts.internal"), each
// optionally with a port ("127.0.0.1:8080", "[::1]:8080",
// "artifacts.internal:8443"). An address or network covers the addresses
// it names, whatever name the source used; a host name covers whatever
// addresses that name resolves to, because the operator trusts it. Without
// a port a rule covers every port but the agent's own listeners, which
// only a rule naming the port opens.
type HostRule struct {
	prefix netip.Prefix // valid for an address or a network
	host   string       // lower case, for a host name
	port   uint16       // 0: any port
	text   string
}

// ParseHostRule parses one allowed_hosts entry.
func ParseHostRule(s string) (HostRule, error) {
	text := strings.TrimSpace(s)
	r := HostRule{text: text}
	if text == "" {
		return r, fmt.Errorf("an empty entry: write an address (127.0.0.1), a network (10.0.0.0/8) or a host name, with an optional :port")
	}
	if p, err := netip.ParsePrefix(text); err == nil {
		r.prefix = p.Masked()
		return r, nil
	}
	if a, err := netip.ParseAddr(text); err == nil {
		r.prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		return r, nil
	}
	host := text
	if h, port, err := net.SplitHostPort(text); err == nil {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return r, fmt.Errorf("%q: the port must be a number from 1 to 65535", text)
		}
		host, r.port = h, uint16(n)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		r.prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		return r, nil
	}
	if !validHostName(host) {
		return r, fmt.Errorf("%q is neither an IP address, a network in CIDR notation, nor a host name", text)
	}
	r.host = strings.TrimSuffix(strings.ToLower(host), ".")
	return r, nil
}

// String is the entry as the operator wrote it.
func (r HostRule) String() string { return r.text }

// covers reports whether the rule allows a connection to ip:port made for
// a source whose URL named host.
func (r HostRule) covers(host string, ip netip.Addr, port uint16) bool {
	if r.port != 0 && r.port != port {
		return false
	}
	if r.host != "" {
		return r.host == strings.TrimSuffix(strings.ToLower(host), ".")
	}
	return r.prefix.Contains(ip)
}

func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// metadataAddrs are cloud metadata services reached at addresses that are
// not link-local: AWS's IPv6 endpoint and Alibaba Cloud's.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// cgnat is the shared address space (RFC 6598), private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// thisNetwork is 0.0.0.0/8: connecting to it reaches this machine.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// restriction names why ip is refused by default, or "" when it is not.
func (s *Sources) restriction(ip netip.Addr) string {
	for _, m := range metadataAddrs {
		if ip == m {
			return "a cloud metadata address"
		}
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (where cloud metadata services answer)"
	case ip.IsUnspecified() || (ip.Is4() && thisNetwork.Contains(ip)):
		return "an unspecified address (it reaches this machine)"
	case ip.IsMulticast():
		return "a multicast address"
	case s.DenyPrivate && (ip.IsPrivate() || cgnat.Contains(ip)):
		return fmt.Sprintf("a private-network address, which %s = true refuses", SettingDenyPrivate)
	}
	return ""
}

// checkDial decides whether a connection to ip:port may be made for a
// source whose URL named host. local lists this machine's addresses.
func (s *Sources) checkDial(host string, ap netip.AddrPort, local func() []netip.Addr) error {
	ip, port := ap.Addr().Unmap(), ap.Port()
	own := s.isOwn(ip, port, local)
	for _, r := range s.AllowedHosts {
		if r.covers(host, ip, port) && (!own || r.port != 0) {
			return nil
		}
	}
	dest := netip.AddrPortFrom(ip, port).String()
	if host != "" && host != ip.String() {
		dest = fmt.Sprintf("%s (%s)", dest, host)
	}
	if own {
		return fmt.Errorf("%w: %s is this agent's own API or RPC listener; %s opens it only with an entry naming the port, such as %q",
			ErrSourceRefused, dest, SettingAllowedHosts, netip.AddrPortFrom(ip, port).String())
	}
	why := s.restriction(ip)
	if why == "" && isLocal(ip, local) {
		why = "an address of this machine"
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is %s; list it in %s (the address %q, a network holding it, or the host name) to fetch from it",
		ErrSourceRefused, dest, why, SettingAllowedHosts, ip.String())
}

// isOwn reports whether ip:port is one of the agent's listeners.
func (s *Sources) isOwn(ip netip.Addr, port uint16, local func() []netip.Addr) bool {
	for _, o := range s.OwnAddrs {
		if o.Port() != port {
			continue
		}
		a := o.Addr().Unmap()
		if a == ip || (a.IsUnspecified() && (ip.IsLoopback() || ip.IsUnspecified() || isLocal(ip, local))) {
			return true
		}
	}
	return false
}

func isLocal(ip netip.Addr, local func() []netip.Addr) bool {
	if local == nil {
		return false
	}
	for _, a := range local() {
		if a == ip {
			return true
		}
	}
	return false
}

// interfaceAddrs lists this machine's addresses, read at each dial:
// interfaces come and go (a DHCP lease, a VPN).
func interfaceAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

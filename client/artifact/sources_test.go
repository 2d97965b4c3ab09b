package artifact

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// refused asserts that err is a final refusal saying each of want.
func refused(t *testing.T, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, ErrSourceRefused) || !final(err) {
		t.Fatalf("err = %v, want a final ErrSourceRefused", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%q does not say %q", err, w)
		}
	}
}

// port is the port of a test server's URL.
func port(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestLoopbackSourcesAreRefusedByAddressAndByName(t *testing.T) {
	f := newFixture(t)
	src := f.url("/a.txt", []byte("a"))
	strict := &Fetcher{}
	err := f.fetchAs(strict, &structs.TaskArtifact{GetterSource: src})
	refused(t, err, "127.0.0.1:"+port(t, src), "a loopback address", SettingAllowedHosts)
	// localhost resolves to a loopback address: the dialled address is
	// what counts, not the name.
	err = f.fetchAs(strict, &structs.TaskArtifact{GetterSource: "http://localhost:" + port(t, src) + "/a.txt"})
	refused(t, err, "(localhost)", "a loopback address", SettingAllowedHosts)
	if n := f.requestCount(); n != 0 {
		t.Fatalf("the server saw %d requests", n)
	}
	if es := f.localEntries(); len(es) != 0 {
		t.Fatalf("local/ holds %v", es)
	}

	// Allowed by address, by network, and by name.
	for _, rule := range []string{"127.0.0.1", "127.0.0.0/8", "127.0.0.1:" + port(t, src)} {
		fe := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, rule)}}}
		if err := f.fetchAs(fe, &structs.TaskArtifact{GetterSource: src}); err != nil {
			t.Fatalf("allowed_hosts = [%q]: %v", rule, err)
		}
	}
	byName := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, "localhost")}}}
	if err := f.fetchAs(byName, &structs.TaskArtifact{GetterSource: "http://localhost:" + port(t, src) + "/a.txt"}); err != nil {
		t.Fatalf("allowed_hosts = [\"localhost\"]: %v", err)
	}
	// A name rule does not cover the address written out.
	err = f.fetchAs(byName, &structs.TaskArtifact{GetterSource: src})
	refused(t, err, "a loopback address")
}

func TestLinkLocalUnspecifiedAndMulticastSourcesAreRefused(t *testing.T) {
	f := newFixture(t)
	for src, want := range map[string]string{
		"http://169.254.169.254/latest/meta-data/": "a link-local address",
		"http://[fe80::1%25lo]:8080/x":             "a link-local address",
		"http://0.0.0.0:1/x":                       "an unspecified address",
		"http://[::]:1/x":                          "an unspecified address",
		"http://224.0.0.1/x":                       "a multicast address",
		"http://[fd00:ec2::254]/latest/meta-data/": "a cloud metadata address",
	} {
		err := f.fetchAs(&Fetcher{}, &structs.TaskArtifact{GetterSource: src})
		refused(t, err, want, SettingAllowedHosts)
	}
}

func TestARedirectToAForbiddenHostIsRefused(t *testing.T) {
	f := newFixture(t)
	target := f.url("/secret", []byte("secret"))
	redirector := httptest.NewServer(http.RedirectHandler(target, http.StatusFound))
	defer redirector.Close()

	// Only the redirector's port is allowed: the hop to the other port
	// on the same address is dialled through the same check.
	fe := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, "127.0.0.1:"+port(t, redirector.URL))}}}
	err := f.fetchAs(fe, &structs.TaskArtifact{GetterSource: redirector.URL + "/go"})
	refused(t, err, "127.0.0.1:"+port(t, target), "a loopback address")
	// A name rule for the redirector does not cover the target either.
	byName := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, "localhost")}}}
	err = f.fetchAs(byName, &structs.TaskArtifact{GetterSource: "http://localhost:" + port(t, redirector.URL) + "/go"})
	refused(t, err, "127.0.0.1:"+port(t, target))
	if n := f.requestCount(); n != 0 {
		t.Fatalf("the forbidden target saw %d requests", n)
	}
	// Both allowed: the redirect is followed.
	both := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, "127.0.0.1")}}}
	if err := f.fetchAs(both, &structs.TaskArtifact{GetterSource: redirector.URL + "/go", GetterMode: ModeFile, RelativeDest: "local/s"}); err != nil {
		t.Fatal(err)
	}
	if f.read("local/s") != "secret" {
		t.Fatal("the redirect was not followed")
	}
}

func TestTheAgentsOwnListenersNeedARuleNamingThePort(t *testing.T) {
	f := newFixture(t)
	src := f.url("/v1/agent/self", []byte("{}"))
	ap := netip.MustParseAddrPort(strings.TrimPrefix(f.srv.URL, "http://"))
	for _, own := range []netip.AddrPort{ap, netip.AddrPortFrom(netip.IPv4Unspecified(), ap.Port())} {
		// Loopback is allowed, but not the agent's own port on it.
		fe := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, "127.0.0.0/8")}, OwnAddrs: []netip.AddrPort{own}}}
		err := f.fetchAs(fe, &structs.TaskArtifact{GetterSource: src})
		refused(t, err, "this agent's own API or RPC listener", SettingAllowedHosts, `"`+ap.String()+`"`)
	}
	if n := f.requestCount(); n != 0 {
		t.Fatalf("the agent's port saw %d requests", n)
	}
	fe := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, ap.String())}, OwnAddrs: []netip.AddrPort{ap}}}
	if err := f.fetchAs(fe, &structs.TaskArtifact{GetterSource: src}); err != nil {
		t.Fatalf("a rule naming the port: %v", err)
	}
}

func TestCheckDialJudgesTheAddressDialled(t *testing.T) {
	local := func() []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("127.0.0.1")}
	}
	own := []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:4646")}
	for _, tc := range []struct {
		name    string
		sources Sources
		host    string
		addr    string
		want    string // "" allowed
	}{
		{"a public address", Sources{}, "example.com", "93.184.216.34:443", ""},
		{"a private address is allowed by default", Sources{}, "repo.internal", "10.1.2.3:80", ""},
		{"unless private networks are denied", Sources{DenyPrivate: true}, "repo.internal", "10.1.2.3:80", SettingDenyPrivate},
		{"shared address space counts as private", Sources{DenyPrivate: true}, "", "100.64.1.1:80", "private-network"},
		{"ULA counts as private", Sources{DenyPrivate: true}, "", "[fd12::1]:80", "private-network"},
		{"a denied private network may be allowed back", Sources{DenyPrivate: true, AllowedHosts: []HostRule{mustRule(t, "10.1.0.0/16")}}, "", "10.1.2.3:80", ""},
		{"an address of this machine", Sources{}, "me", "10.0.0.5:8080", "an address of this machine"},
		{"the agent's port on any address of this machine", Sources{OwnAddrs: own, AllowedHosts: []HostRule{mustRule(t, "10.0.0.5")}}, "", "10.0.0.5:4646", "own API or RPC listener"},
		{"another machine's port 4646", Sources{OwnAddrs: own}, "", "93.184.216.34:4646", ""},
		{"an IPv4-mapped loopback", Sources{}, "", "[::ffff:127.0.0.1]:80", "a loopback address"},
		{"IPv6 loopback", Sources{}, "", "[::1]:80", "a loopback address"},
		{"0.1.2.3 reaches this machine", Sources{}, "", "0.1.2.3:80", "an unspecified address"},
		{"Alibaba's metadata service", Sources{}, "", "100.100.100.200:80", "a cloud metadata address"},
		{"a host name rule with a port", Sources{AllowedHosts: []HostRule{mustRule(t, "Repo.Internal.:8443")}}, "repo.internal", "127.0.0.1:8443", ""},
		{"a host name rule with another port", Sources{AllowedHosts: []HostRule{mustRule(t, "repo.internal:8443")}}, "repo.internal", "127.0.0.1:8080", "a loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sources.checkDial(tc.host, netip.MustParseAddrPort(tc.addr), local)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			refused(t, err, tc.want)
		})
	}
}

func TestHostRulesParse(t *testing.T) {
	for _, ok := range []string{"127.0.0.1", "::1", "10.0.0.0/8", "fd00::/8", "127.0.0.1:8080", "[::1]:8080", "repo.internal", "repo.internal:443", "localhost"} {
		if _, err := ParseHostRule(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "http://repo", "repo.internal:0", "repo.internal:99999", "10.0.0.0/33", "a b", "-bad-.com", "repo/path"} {
		if _, err := ParseHostRule(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	r := mustRule(t, "10.1.2.3/8")
	if !r.covers("", netip.MustParseAddr("10.200.0.1"), 80) || r.covers("", netip.MustParseAddr("11.0.0.1"), 80) {
		t.Fatal("a network rule covers its network only")
	}
}

// TestAProxyIsUsedOnlyWhenAskedAndTargetsAreStillChecked drives the
// guard's proxy with a forward proxy on loopback: the operator chose it,
// so dialling it is allowed; a target written as a refused address is
// refused before the proxy sees it.
func TestAProxyIsUsedOnlyWhenAskedAndTargetsAreStillChecked(t *testing.T) {
	f := newFixture(t)
	var proxied []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied = append(proxied, r.URL.String())
		_, _ = w.Write([]byte("via proxy"))
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	withProxy := func(use bool) *Fetcher {
		return &Fetcher{
			Sources: Sources{UseProxy: use},
			newGuard: func(s *Sources) *dialGuard {
				g := newDialGuard(s)
				g.envProxy = func(*http.Request) (*url.URL, error) { return proxyURL, nil }
				return g
			},
		}
	}
	a := &structs.TaskArtifact{GetterSource: "http://artifacts.example/app.txt", GetterMode: ModeFile, RelativeDest: "local/app.txt"}
	if err := f.fetchAs(withProxy(true), a); err != nil {
		t.Fatal(err)
	}
	if f.read("local/app.txt") != "via proxy" || len(proxied) != 1 || proxied[0] != "http://artifacts.example/app.txt" {
		t.Fatalf("proxied %v", proxied)
	}
	err := f.fetchAs(withProxy(true), &structs.TaskArtifact{GetterSource: "http://169.254.169.254/latest/meta-data/"})
	refused(t, err, "a link-local address")
	err = f.fetchAs(withProxy(true), &structs.TaskArtifact{GetterSource: "http://localhost:4646/v1/agent/self"})
	refused(t, err, "a loopback address")
	if len(proxied) != 1 {
		t.Fatalf("the proxy saw refused targets: %v", proxied)
	}
	// Without UseProxy the environment's proxy is not used: the name
	// is resolved here (and .example does not resolve).
	err = f.fetchAs(withProxy(false), a)
	if err == nil || len(proxied) != 1 {
		t.Fatalf("fetched without the proxy? err %v, proxied %v", err, proxied)
	}
}

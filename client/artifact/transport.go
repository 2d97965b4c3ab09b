package artifact

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// httpClient returns the client for one artifact's downloads: Go's default
// transport settings but for the proxy (see Sources.UseProxy), every
// connection checked by guard as it is dialled, TLS verification skipped
// only for an artifact that asks, and every response body bounded by
// maxBytes.
func httpClient(insecure bool, maxBytes int64, guard *dialGuard) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = guard.proxy
	base.DialContext = guard.dialContext
	if insecure {
		base.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the job asked for it
	}
	return &http.Client{Transport: &limitTransport{base: base, max: maxBytes}}
}

// dialGuard applies a Sources policy to the connections of one fetch. The
// check runs in the dialer's Control hook, after name resolution and just
// before connect(2), on the address actually dialled: a name cannot
// resolve to one address when checked and another when used, and every
// redirect dials through the same hook. The first refusal is kept, so the
// fetch can report it whatever go-getter wraps it in.
type dialGuard struct {
	sources *Sources
	// local lists this machine's addresses (interfaceAddrs), envProxy
	// the proxy for a request (http.ProxyFromEnvironment, which reads
	// the environment once per process); tests replace them.
	local    func() []netip.Addr
	envProxy func(*http.Request) (*url.URL, error)

	mu      sync.Mutex
	refused error
	proxies map[string]bool // host:port of proxies the environment named
}

func newDialGuard(s *Sources) *dialGuard {
	return &dialGuard{sources: s, local: interfaceAddrs, envProxy: http.ProxyFromEnvironment, proxies: map[string]bool{}}
}

func (g *dialGuard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	g.mu.Lock()
	proxy := g.proxies[addr]
	g.mu.Unlock()
	if !proxy {
		// The operator chose the proxy; what the job asks for is the
		// target, checked in proxy below as far as it can be.
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return g.refuse(fmt.Errorf("%w: cannot tell the address of %q: %v", ErrSourceRefused, address, err))
			}
			if err := g.sources.checkDial(host, ap, g.local); err != nil {
				return g.refuse(err)
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}

// proxy is the transport's Proxy function: none unless the policy says to
// use the environment's. Through a proxy the target's name is resolved by
// the proxy, so only a target written as an address (or "localhost") can
// be checked here; the proxy's own rules apply to the rest.
func (g *dialGuard) proxy(req *http.Request) (*url.URL, error) {
	if !g.sources.UseProxy {
		return nil, nil
	}
	u, err := g.envProxy(req)
	if err != nil || u == nil {
		return u, err
	}
	g.mu.Lock()
	g.proxies[net.JoinHostPort(u.Hostname(), portOf(u))] = true
	g.mu.Unlock()

	host := req.URL.Hostname()
	ip, err := netip.ParseAddr(host)
	if err != nil && strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		ip, err = netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
	}
	if err == nil {
		ap, err := netip.ParseAddrPort(net.JoinHostPort(ip.String(), portOf(req.URL)))
		if err == nil {
			if err := g.sources.checkDial(host, ap, g.local); err != nil {
				return nil, g.refuse(err)
			}
		}
	}
	return u, nil
}

// portOf is u's port, or its scheme's (as net/http dials them).
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch u.Scheme {
	case "https":
		return "443"
	case "socks5", "socks5h":
		return "1080"
	}
	return "80"
}

func (g *dialGuard) refuse(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused == nil {
		g.refused = err
	}
	return err
}

// refusal is the first connection the guard refused, or nil.
func (g *dialGuard) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// limitTransport fails a response larger than max instead of cutting it
// short: a truncated binary must never look like a finished download.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || t.max <= 0 {
		return resp, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, tooLarge("the response", resp.ContentLength, t.max)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

func tooLarge(what string, size, limit int64) error {
	if size < 0 {
		return fmt.Errorf("%w: %s is larger than the limit of %d bytes", ErrTooLarge, what, limit)
	}
	return fmt.Errorf("%w: %s is %d bytes, more than the limit of %d bytes", ErrTooLarge, what, size, limit)
}

// limitedBody reads at most max bytes and fails on the first byte past it.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Tell a body that ends exactly at the limit from a larger one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, tooLarge("the response", -1, b.max)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

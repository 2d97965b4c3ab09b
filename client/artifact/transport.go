package artifact

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
)

// httpClient returns the client for one artifact's downloads: Go's default
// transport settings (proxy from the environment, dial and TLS handshake
// timeouts), TLS verification skipped only for an artifact that asks, and
// every response body bounded by maxBytes.
func httpClient(insecure bool, maxBytes int64) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		base.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the job asked for it
	}
	return &http.Client{Transport: &limitTransport{base: base, max: maxBytes}}
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

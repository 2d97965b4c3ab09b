package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultAddress is where the client looks for an agent when neither the
// config nor the environment names one: the HTTP port a dev agent listens on.
const DefaultAddress = "http://127.0.0.1:4646"

// Environment variables read by DefaultConfig. Drover's own names win over
// Nomad's so that a shell set up for both talks to Drover, while a shell set
// up only for Nomad still works.
const (
	EnvAddress   = "DROVER_ADDR"
	EnvNamespace = "DROVER_NAMESPACE"
	EnvRegion    = "DROVER_REGION"
	EnvToken     = "DROVER_TOKEN"
	// EnvHTTPTimeout bounds each ordinary request (a Go duration such as
	// "2m"); see Config.Timeout.
	EnvHTTPTimeout = "DROVER_HTTP_TIMEOUT"

	NomadEnvAddress   = "NOMAD_ADDR"
	NomadEnvNamespace = "NOMAD_NAMESPACE"
	NomadEnvRegion    = "NOMAD_REGION"
	NomadEnvToken     = "NOMAD_TOKEN"
)

// Defaults for the HTTP client built when Config.HTTPClient is nil.
const (
	// DefaultTimeout bounds one ordinary request. Blocking queries get their
	// wait time on top, and log streams are not bounded at all.
	DefaultTimeout = 60 * time.Second

	// DefaultDialTimeout bounds connecting to the agent, so an address with
	// nothing behind it fails fast instead of hanging for the full timeout.
	DefaultDialTimeout = 10 * time.Second
)

// Config says which agent to talk to and how.
type Config struct {
	// Address is the agent's HTTP address, such as http://127.0.0.1:4646. A
	// bare host:port is taken as http.
	Address string

	// Namespace and Region are the defaults for requests whose options do
	// not set them.
	Namespace string
	Region    string

	// SecretID is the ACL token sent with every request, if set.
	SecretID string

	// Timeout bounds each request that is neither a blocking query nor a
	// stream. Zero means DefaultTimeout; negative means no bound.
	Timeout time.Duration

	// HTTPClient, if set, is used as is; Timeout still applies per request.
	HTTPClient *http.Client

	// TLSConfig configures HTTPS (see tls.go); unset fields are read from
	// the environment (DROVER_CACERT, then NOMAD_CACERT, ...). It is not
	// applied to an HTTPClient given above.
	TLSConfig *TLSConfig

	// Getenv reads the environment for DefaultConfig; nil means os.Getenv.
	// Tests set it to avoid depending on the real environment.
	Getenv func(string) string
}

// DefaultConfig returns a config filled from the environment: DROVER_ADDR,
// then NOMAD_ADDR, then DefaultAddress, and likewise for namespace, region
// and token.
func DefaultConfig() *Config {
	return ConfigFromEnv(os.Getenv)
}

// ConfigFromEnv is DefaultConfig with the environment read through getenv.
func ConfigFromEnv(getenv func(string) string) *Config {
	first := func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	c := &Config{
		Address:   first(EnvAddress, NomadEnvAddress),
		Namespace: first(EnvNamespace, NomadEnvNamespace),
		Region:    first(EnvRegion, NomadEnvRegion),
		SecretID:  first(EnvToken, NomadEnvToken),
		TLSConfig: tlsFromEnv(first),
	}
	if d, err := time.ParseDuration(getenv(EnvHTTPTimeout)); err == nil && d != 0 {
		c.Timeout = d
	}
	if c.Address == "" {
		c.Address = DefaultAddress
	}
	return c
}

// Client talks to one agent's HTTP API. It is safe for concurrent use.
type Client struct {
	config  Config
	baseURL *url.URL
	http    *http.Client
}

// NewClient returns a client for cfg; nil means DefaultConfig. Unset fields
// are filled from the environment the same way DefaultConfig does.
func NewClient(cfg *Config) (*Client, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := ConfigFromEnv(getenv)
	if c.Address == "" {
		c.Address = env.Address
	}
	if c.Namespace == "" {
		c.Namespace = env.Namespace
	}
	if c.Region == "" {
		c.Region = env.Region
	}
	if c.SecretID == "" {
		c.SecretID = env.SecretID
	}
	if c.Timeout == 0 {
		c.Timeout = env.Timeout
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	base, err := parseAddress(c.Address)
	if err != nil {
		return nil, err
	}
	c.TLSConfig = c.TLSConfig.withDefaults(env.TLSConfig)
	hc := c.HTTPClient
	if hc == nil {
		tc, err := c.TLSConfig.build()
		if err != nil {
			return nil, err
		}
		hc = defaultHTTPClient(tc)
	}
	return &Client{config: c, baseURL: base, http: hc}, nil
}

// Address returns the agent address the client sends requests to.
func (c *Client) Address() string { return c.baseURL.String() }

// parseAddress accepts a URL or a bare host:port. Nomad users often write
// NOMAD_ADDR=127.0.0.1:4646, which url.Parse would read as a scheme.
func parseAddress(addr string) (*url.URL, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("invalid agent address %q: %w", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid agent address %q: scheme must be http or https", addr)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid agent address %q: no host", addr)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// defaultHTTPClient has no overall timeout, because blocking queries and log
// streams legitimately stay open for minutes; requests are bounded by
// contexts instead. It does not share http.DefaultTransport, so a caller's
// changes to that cannot leak in. tlsConfig is used for https addresses.
func defaultHTTPClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:       tlsConfig,
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		MaxIdleConnsPerHost:   8,
	}}
}

// QueryOptions are the options of a read.
type QueryOptions struct {
	// Namespace and Region override the client's defaults.
	Namespace string
	Region    string

	// AllowStale lets any server answer, not just the leader; the answer
	// may lag by QueryMeta.LastContact.
	AllowStale bool

	// WaitIndex makes the read a blocking query: the server answers once
	// its data is newer than WaitIndex, or when WaitTime has passed.
	WaitIndex uint64
	WaitTime  time.Duration

	// Prefix filters list endpoints by ID prefix.
	Prefix string

	// Filter is a server-side filter expression, where supported.
	Filter string

	// PerPage and NextToken page through list endpoints.
	PerPage   int32
	NextToken string

	// Params are extra query parameters.
	Params map[string]string

	// AuthToken overrides the client's SecretID.
	AuthToken string

	ctx context.Context
}

// WithContext returns a copy of q whose request is bound to ctx.
func (q *QueryOptions) WithContext(ctx context.Context) *QueryOptions {
	c := valueOf(q)
	c.ctx = ctx
	return &c
}

func (q *QueryOptions) context() context.Context {
	if q != nil && q.ctx != nil {
		return q.ctx
	}
	return context.Background()
}

// WriteOptions are the options of a write.
type WriteOptions struct {
	Namespace string
	Region    string
	AuthToken string

	// Params are extra query parameters.
	Params map[string]string

	ctx context.Context
}

// WithContext returns a copy of w whose request is bound to ctx.
func (w *WriteOptions) WithContext(ctx context.Context) *WriteOptions {
	c := valueOf(w)
	c.ctx = ctx
	return &c
}

func (w *WriteOptions) context() context.Context {
	if w != nil && w.ctx != nil {
		return w.ctx
	}
	return context.Background()
}

// request is one HTTP call being built.
type request struct {
	method string
	path   string
	params url.Values
	header http.Header
	body   any
	ctx    context.Context

	// wait is the blocking-query wait, added to the request timeout.
	wait time.Duration

	// stream marks a request whose body is read for as long as the caller
	// likes, so no timeout applies.
	stream bool
}

func (c *Client) newRequest(method, path string) *request {
	r := &request{method: method, path: path, params: url.Values{}, header: http.Header{}, ctx: context.Background()}
	if c.config.Namespace != "" {
		r.params.Set("namespace", c.config.Namespace)
	}
	if c.config.Region != "" {
		r.params.Set("region", c.config.Region)
	}
	if c.config.SecretID != "" {
		r.header.Set("X-Nomad-Token", c.config.SecretID)
	}
	return r
}

func (r *request) setQueryOptions(q *QueryOptions) {
	r.ctx = q.context()
	if q == nil {
		return
	}
	setIf := func(k, v string) {
		if v != "" {
			r.params.Set(k, v)
		}
	}
	setIf("namespace", q.Namespace)
	setIf("region", q.Region)
	setIf("prefix", q.Prefix)
	setIf("filter", q.Filter)
	setIf("next_token", q.NextToken)
	if q.AllowStale {
		r.params.Set("stale", "")
	}
	if q.WaitIndex != 0 {
		r.params.Set("index", strconv.FormatUint(q.WaitIndex, 10))
	}
	if q.WaitTime != 0 {
		r.params.Set("wait", fmt.Sprintf("%dms", q.WaitTime.Milliseconds()))
		r.wait = q.WaitTime
	} else if q.WaitIndex != 0 {
		// The server's default wait for a blocking query is five minutes.
		r.wait = 5 * time.Minute
	}
	if q.PerPage != 0 {
		r.params.Set("per_page", strconv.Itoa(int(q.PerPage)))
	}
	if q.AuthToken != "" {
		r.header.Set("X-Nomad-Token", q.AuthToken)
	}
	for k, v := range q.Params {
		r.params.Set(k, v)
	}
}

func (r *request) setWriteOptions(w *WriteOptions) {
	r.ctx = w.context()
	if w == nil {
		return
	}
	if w.Namespace != "" {
		r.params.Set("namespace", w.Namespace)
	}
	if w.Region != "" {
		r.params.Set("region", w.Region)
	}
	if w.AuthToken != "" {
		r.header.Set("X-Nomad-Token", w.AuthToken)
	}
	for k, v := range w.Params {
		r.params.Set(k, v)
	}
}

// do sends r and returns the response for the caller to read and close. A
// non-2xx status becomes an *UnexpectedResponseError. The returned cancel
// must be called once the body has been read.
func (c *Client) do(r *request) (*http.Response, context.CancelFunc, time.Duration, error) {
	// r.path is already escaped (see escape), so it is joined as text
	// rather than assigned to URL.Path, which would escape it again.
	u, err := url.Parse(c.baseURL.String() + r.path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("bad request path %q: %w", r.path, err)
	}
	// A path may carry its own query (?address=a&address=b); the request's
	// parameters are added to it.
	q := u.Query()
	for k, vs := range r.params {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	u.RawQuery = q.Encode()

	var body io.Reader
	if r.body != nil {
		if rd, ok := r.body.(io.Reader); ok {
			body = rd
		} else {
			buf, err := json.Marshal(r.body)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("encoding request body: %w", err)
			}
			body = bytes.NewReader(buf)
		}
	}

	ctx, cancel := r.ctx, context.CancelFunc(func() {})
	var limit time.Duration
	var headerTimer *time.Timer
	switch {
	case c.config.Timeout <= 0:
	case !r.stream:
		// A blocking query may legitimately take its wait time plus the
		// server's jitter of up to wait/16.
		limit = c.config.Timeout + r.wait + r.wait/16
		ctx, cancel = context.WithTimeout(ctx, limit)
	default:
		// A stream may last as long as its reader likes, but the agent
		// must still answer it (send its headers) within the timeout.
		limit = c.config.Timeout
		ctx, cancel = context.WithCancel(ctx)
		headerTimer = time.AfterFunc(limit, cancel)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		cancel()
		return nil, nil, 0, err
	}
	req.Header = r.header
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "drover-api")

	start := time.Now()
	resp, err := c.http.Do(req)
	elapsed := time.Since(start)
	headersInTime := headerTimer == nil || headerTimer.Stop()
	if err != nil {
		cancel()
		if limit > 0 && r.ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || !headersInTime) {
			return nil, nil, elapsed, &TimeoutError{Method: r.method, Path: r.path, Address: c.baseURL.String(), Limit: limit}
		}
		return nil, nil, elapsed, fmt.Errorf("%s %s: %w", r.method, r.path, explainTLS(err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer cancel()
		defer resp.Body.Close()
		return nil, nil, elapsed, newUnexpectedResponseError(r, resp)
	}
	return resp, cancel, elapsed, nil
}

// query does a GET into out and returns the response's QueryMeta.
func (c *Client) query(path string, out any, q *QueryOptions) (*QueryMeta, error) {
	r := c.newRequest(http.MethodGet, path)
	r.setQueryOptions(q)
	resp, cancel, rtt, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	qm := &QueryMeta{RequestTime: rtt}
	if err := parseQueryMeta(resp.Header, qm); err != nil {
		return nil, err
	}
	if err := decodeBody(resp, out); err != nil {
		return nil, err
	}
	return qm, nil
}

// write sends in as the JSON body of method to path and decodes the answer
// into out (either may be nil).
func (c *Client) write(method, path string, in, out any, w *WriteOptions) (*WriteMeta, error) {
	r := c.newRequest(method, path)
	r.setWriteOptions(w)
	r.body = in
	resp, cancel, rtt, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	wm := &WriteMeta{RequestTime: rtt}
	idx, err := parseIndex(resp.Header)
	if err != nil {
		return nil, err
	}
	wm.LastIndex = idx
	if err := decodeBody(resp, out); err != nil {
		return nil, err
	}
	return wm, nil
}

func (c *Client) put(path string, in, out any, w *WriteOptions) (*WriteMeta, error) {
	return c.write(http.MethodPut, path, in, out, w)
}

func (c *Client) post(path string, in, out any, w *WriteOptions) (*WriteMeta, error) {
	return c.write(http.MethodPost, path, in, out, w)
}

func (c *Client) delete(path string, out any, w *WriteOptions) (*WriteMeta, error) {
	return c.write(http.MethodDelete, path, nil, out, w)
}

func decodeBody(resp *http.Response, out any) error {
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding response of %s %s: %w", resp.Request.Method, resp.Request.URL.Path, err)
	}
	return nil
}

// parseQueryMeta reads the X-Nomad-* headers. A missing header is left at
// its zero value, because not every endpoint (status, agent) sets them; a
// malformed one is an error, because it means we are not talking to an
// agent at all.
func parseQueryMeta(h http.Header, qm *QueryMeta) error {
	idx, err := parseIndex(h)
	if err != nil {
		return err
	}
	qm.LastIndex = idx
	if v := h.Get("X-Nomad-LastContact"); v != "" {
		ms, err := strconv.ParseUint(v, 10, 63)
		if err != nil {
			return fmt.Errorf("malformed X-Nomad-LastContact header %q", v)
		}
		qm.LastContact = time.Duration(ms) * time.Millisecond
	}
	qm.KnownLeader = h.Get("X-Nomad-KnownLeader") == "true"
	qm.NextToken = h.Get("X-Nomad-NextToken")
	return nil
}

func parseIndex(h http.Header) (uint64, error) {
	v := h.Get("X-Nomad-Index")
	if v == "" {
		return 0, nil
	}
	idx, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed X-Nomad-Index header %q", v)
	}
	return idx, nil
}

// escape makes an ID safe as one path segment.
func escape(id string) string { return url.PathEscape(id) }

// TimeoutError is a request the agent did not answer in time: it may be
// overloaded, stopped (SIGSTOP) or not an agent at all. The message says
// how to wait longer.
type TimeoutError struct {
	Method, Path, Address string
	Limit                 time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s %s: the agent at %s did not answer within %s; to wait longer, set %s (for example %s=2m)",
		e.Method, e.Path, e.Address, e.Limit, EnvHTTPTimeout, EnvHTTPTimeout)
}

// Unwrap makes a TimeoutError a context.DeadlineExceeded for errors.Is.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

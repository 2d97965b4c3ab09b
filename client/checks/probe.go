package checks

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// Execer runs a script check's command in its task's context (the task
// runner's Exec): it returns the exit code, or an error when the command
// could not run (the task is not running, its driver cannot exec).
type Execer func(ctx context.Context, task, command string, args []string, out io.Writer) (int, error)

// prober runs one probe of each type. Its HTTP client is shared by the
// alloc's checks: no keep-alive, so a probe is a fresh connection as a
// client of the service would make, and no connection outlives a probe.
type prober struct {
	http *http.Client
	exec Execer
}

func newProber(exec Execer) *prober {
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	insecure := tr.Clone()
	insecure.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the check asked for it
	return &prober{
		http: &http.Client{Transport: &skipVerifySwitch{verify: tr, skip: insecure}},
		exec: exec,
	}
}

// probe runs s once, within ctx (which carries the timeout).
func (p *prober) probe(ctx context.Context, s *Spec) outcome {
	switch s.Type {
	case TypeHTTP, TypeTCP:
		if s.AddressErr != "" {
			return outcome{status: StatusFailure, output: s.AddressErr}
		}
		if s.Type == TypeHTTP {
			return p.probeHTTP(ctx, s)
		}
		return probeTCP(ctx, s)
	case TypeScript:
		return p.probeScript(ctx, s)
	}
	return outcome{status: StatusFailure, output: fmt.Sprintf("check type %q is not supported: Drover runs http, tcp and script checks", s.Type)}
}

// probeHTTP passes on a 2xx answer. The output is the answer's status and
// the start of its body.
func (p *prober) probeHTTP(ctx context.Context, s *Spec) outcome {
	scheme := s.Protocol
	if scheme == "" {
		scheme = "http"
	}
	method := s.Method
	if method == "" {
		method = http.MethodGet
	}
	path := s.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := scheme + "://" + s.Address + path
	var body io.Reader
	if s.Body != "" {
		body = strings.NewReader(s.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return outcome{status: StatusFailure, output: fmt.Sprintf("bad check request %s %s: %v", method, url, err)}
	}
	for k, vs := range s.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if s.TLSSkipVerify {
		req = req.WithContext(context.WithValue(req.Context(), skipVerifyKey{}, true))
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return outcome{status: StatusFailure, output: fmt.Sprintf("HTTP %s %s: %v", method, url, unwrapURLError(err))}
	}
	defer resp.Body.Close()
	var out limitedBuffer
	fmt.Fprintf(&out, "HTTP %s %s: %s", method, url, resp.Status)
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxOutput))
	if len(b) > 0 {
		fmt.Fprintf(&out, " Output: %s", b)
	}
	status := StatusFailure
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		status = StatusSuccess
	}
	return outcome{status: status, code: resp.StatusCode, output: out.String()}
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap()
	}
	return err
}

// probeTCP passes when a connection is accepted.
func probeTCP(ctx context.Context, s *Spec) outcome {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Address)
	if err != nil {
		return outcome{status: StatusFailure, output: fmt.Sprintf("TCP connect %s: %v", s.Address, err)}
	}
	conn.Close()
	return outcome{status: StatusSuccess, output: fmt.Sprintf("TCP connect %s: Success", s.Address)}
}

// probeScript runs the command in its task: exit 0 passes, 1 warns,
// anything else fails, as Consul judges scripts.
func (p *prober) probeScript(ctx context.Context, s *Spec) outcome {
	if s.Task == "" {
		return outcome{status: StatusFailure, output: "a script check of a group service must name its task (task = \"...\")"}
	}
	if p.exec == nil {
		return outcome{status: StatusFailure, output: "script checks cannot run on this client"}
	}
	var out limitedBuffer
	code, err := p.exec(ctx, s.Task, s.Command, s.Args, &out)
	if ctx.Err() != nil {
		return outcome{status: StatusFailure, output: fmt.Sprintf("script %s timed out after %s. Output: %s", s.Command, s.Timeout, out.String())}
	}
	if err != nil {
		return outcome{status: StatusFailure, output: fmt.Sprintf("script %s: %v", s.Command, err)}
	}
	status := StatusFailure
	switch code {
	case 0:
		status = StatusSuccess
	case 1:
		status = StatusWarning
	}
	return outcome{status: status, code: code, output: out.String()}
}

// skipVerifyKey marks a request whose check set tls_skip_verify.
type skipVerifyKey struct{}

// skipVerifySwitch sends a request through the transport that skips TLS
// verification only when its check asked for it.
type skipVerifySwitch struct{ verify, skip http.RoundTripper }

func (s *skipVerifySwitch) RoundTrip(r *http.Request) (*http.Response, error) {
	if v, _ := r.Context().Value(skipVerifyKey{}).(bool); v {
		return s.skip.RoundTrip(r)
	}
	return s.verify.RoundTrip(r)
}

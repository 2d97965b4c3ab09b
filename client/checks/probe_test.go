package checks

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func hostPort(t *testing.T, url string) string {
	t.Helper()
	return strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
}

func TestHTTPProbe(t *testing.T) {
	var gotMethod, gotHost, gotHeader, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotMethod, gotHost, gotHeader = r.Method, r.Host, r.Header.Get("X-Check")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, "fine")
		case "/created":
			w.WriteHeader(http.StatusCreated)
		case "/big":
			io.WriteString(w, strings.Repeat("x", 3*MaxOutput))
		case "/redirect":
			http.Redirect(w, r, "/missing", http.StatusFound)
		default:
			http.Error(w, "broken", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	p := newProber(nil)
	addr := hostPort(t, srv.URL)
	cases := []struct {
		name       string
		spec       Spec
		wantStatus string
		wantCode   int
		wantOutput string
	}{
		{"a 200 passes", Spec{Type: TypeHTTP, Address: addr, Path: "/ok"}, StatusSuccess, 200, "fine"},
		{"any 2xx passes", Spec{Type: TypeHTTP, Address: addr, Path: "created"}, StatusSuccess, 201, "201 Created"},
		{"a 500 fails", Spec{Type: TypeHTTP, Address: addr, Path: "/bad"}, StatusFailure, 500, "broken"},
		{"a redirect is followed to its answer", Spec{Type: TypeHTTP, Address: addr, Path: "/redirect"}, StatusFailure, 500, "broken"},
		{"nothing listening fails", Spec{Type: TypeHTTP, Address: closedAddr(t), Path: "/"}, StatusFailure, 0, "connection refused"},
		{"no address fails with why", Spec{Type: TypeHTTP, AddressErr: "no port"}, StatusFailure, 0, "no port"},
		{"an unknown type fails with why", Spec{Type: "grpc"}, StatusFailure, 0, `"grpc" is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := p.probe(context.Background(), &c.spec)
			if out.status != c.wantStatus || out.code != c.wantCode || !strings.Contains(out.output, c.wantOutput) {
				t.Fatalf("got %+v; want %s %d containing %q", out, c.wantStatus, c.wantCode, c.wantOutput)
			}
		})
	}

	t.Run("method, header, Host and body are sent", func(t *testing.T) {
		s := Spec{Type: TypeHTTP, Address: addr, Path: "/ok", Method: "POST", Body: "ping",
			Header: map[string][]string{"X-Check": {"yes"}, "Host": {"svc.example"}}}
		if out := p.probe(context.Background(), &s); out.status != StatusSuccess {
			t.Fatalf("probe: %+v", out)
		}
		if gotMethod != "POST" || gotHost != "svc.example" || gotHeader != "yes" || gotBody != "ping" {
			t.Fatalf("server saw %s Host=%s X-Check=%s body=%q", gotMethod, gotHost, gotHeader, gotBody)
		}
	})
	t.Run("the output is bounded", func(t *testing.T) {
		out := p.probe(context.Background(), &Spec{Type: TypeHTTP, Address: addr, Path: "/big"})
		if len(out.output) > MaxOutput+64 || out.status != StatusSuccess {
			t.Fatalf("output of %d bytes, status %s", len(out.output), out.status)
		}
	})
	t.Run("a slow answer fails at the timeout", func(t *testing.T) {
		block := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
		defer slow.Close()
		defer close(block)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		out := p.probe(ctx, &Spec{Type: TypeHTTP, Address: hostPort(t, slow.URL)})
		if out.status != StatusFailure || !strings.Contains(out.output, "deadline exceeded") {
			t.Fatalf("got %+v", out)
		}
	})
}

func TestHTTPSProbeVerifiesUnlessToldNotTo(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	p := newProber(nil)
	s := Spec{Type: TypeHTTP, Protocol: "https", Address: hostPort(t, srv.URL)}
	if out := p.probe(context.Background(), &s); out.status != StatusFailure || !strings.Contains(out.output, "certificate") {
		t.Fatalf("an unverifiable certificate must fail: %+v", out)
	}
	s.TLSSkipVerify = true
	if out := p.probe(context.Background(), &s); out.status != StatusSuccess {
		t.Fatalf("tls_skip_verify: %+v", out)
	}
}

// closedAddr returns an address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	p := newProber(nil)
	if out := p.probe(context.Background(), &Spec{Type: TypeTCP, Address: l.Addr().String()}); out.status != StatusSuccess {
		t.Fatalf("listening: %+v", out)
	}
	if out := p.probe(context.Background(), &Spec{Type: TypeTCP, Address: closedAddr(t)}); out.status != StatusFailure || !strings.Contains(out.output, "refused") {
		t.Fatalf("closed: %+v", out)
	}
}

func TestScriptProbeJudgesTheExitCode(t *testing.T) {
	var code int
	var err error
	var gotTask, gotCmd string
	var gotArgs []string
	p := newProber(func(ctx context.Context, task, command string, args []string, out io.Writer) (int, error) {
		gotTask, gotCmd, gotArgs = task, command, args
		io.WriteString(out, strings.Repeat("y", 2*MaxOutput))
		return code, err
	})
	s := Spec{Type: TypeScript, Task: "app", Command: "check.sh", Args: []string{"-v"}}
	cases := []struct {
		code   int
		err    error
		status string
	}{
		{0, nil, StatusSuccess}, {1, nil, StatusWarning}, {2, nil, StatusFailure},
		{0, errors.New("task is not running"), StatusFailure},
	}
	for _, c := range cases {
		code, err = c.code, c.err
		out := p.probe(context.Background(), &s)
		if out.status != c.status {
			t.Fatalf("exit %d err %v: status %s, want %s", c.code, c.err, out.status, c.status)
		}
		if c.err == nil && (out.code != c.code || len(out.output) > MaxOutput+64) {
			t.Fatalf("exit %d: %+v (output %d bytes)", c.code, out, len(out.output))
		}
	}
	if gotTask != "app" || gotCmd != "check.sh" || len(gotArgs) != 1 || gotArgs[0] != "-v" {
		t.Fatalf("ran %q %q %v", gotTask, gotCmd, gotArgs)
	}
	noTask := Spec{Type: TypeScript, Command: "x"}
	if out := p.probe(context.Background(), &noTask); out.status != StatusFailure || !strings.Contains(out.output, "must name its task") {
		t.Fatalf("a group script check without a task: %+v", out)
	}
}

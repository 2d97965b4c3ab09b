package command

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// The CLI tests run commands against fakeAgent, an httptest server that
// answers each "METHOD /path" with canned, Nomad-shaped JSON. A route may
// have several answers, served in order (the last one repeats), which is
// how a blocking query sees an evaluation go from pending to complete.

type reply struct {
	status int
	index  uint64
	body   string
}

type request struct {
	method, path string
	query        url.Values
	body         string
}

type fakeAgent struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string][]reply
	served map[string]int
	reqs   []request
}

func newFakeAgent(t *testing.T) *fakeAgent {
	t.Helper()
	f := &fakeAgent{t: t, routes: map[string][]reply{}, served: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// on sets the answers of a route; a body alone means 200 with index 1.
func (f *fakeAgent) on(route string, replies ...reply) *fakeAgent {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[route] = replies
	f.served[route] = 0
	return f
}

// json is shorthand for one 200 answer.
func (f *fakeAgent) json(route, body string) *fakeAgent {
	return f.on(route, reply{body: body, index: 1})
}

func (f *fakeAgent) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	route := r.Method + " " + r.URL.Path
	f.mu.Lock()
	f.reqs = append(f.reqs, request{r.Method, r.URL.Path, r.URL.Query(), string(body)})
	replies := f.routes[route]
	var rep reply
	ok := len(replies) > 0
	if ok {
		i := min(f.served[route], len(replies)-1)
		f.served[route]++
		rep = replies[i]
	}
	f.mu.Unlock()
	if !ok {
		http.Error(w, "no route "+route, http.StatusNotFound)
		return
	}
	if rep.index != 0 {
		w.Header().Set("X-Nomad-Index", itoa(rep.index))
	}
	w.Header().Set("X-Nomad-KnownLeader", "true")
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

// requests returns the requests made to a route, in order.
func (f *fakeAgent) requests(route string) []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []request
	for _, r := range f.reqs {
		if r.method+" "+r.path == route {
			out = append(out, r)
		}
	}
	return out
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// testNow is the fixed clock of the CLI tests: times in canned answers are
// written relative to it, so relative times ("1m5s ago") are exact.
var testNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// result is one command run.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the CLI through run, the process entry point, against the
// fake agent with a fixed clock and the given standard input. The
// environment is empty, so only -address decides where requests go.
func runCLI(t *testing.T, f *fakeAgent, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := newMeta(&stdout, &stderr)
	m.stdin = strings.NewReader(stdin)
	m.getenv = func(string) string { return "" }
	m.environ = func() []string { return nil }
	m.now = func() time.Time { return testNow }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.ctx = ctx
	if f != nil && len(args) > 0 {
		args = withAddress(args, f.srv.URL)
	}
	code, ok := runVerbMeta(m, args)
	if !ok {
		t.Fatalf("%v is not a verb", args)
	}
	return result{code, stdout.String(), stderr.String()}
}

// withAddress inserts -address after the verb's name (the leading words
// that are not flags and name a verb).
func withAddress(args []string, addr string) []string {
	n := 0
	for n < len(args) && n < 3 && isVerbPrefix(strings.Join(args[:n+1], " ")) {
		n++
	}
	out := append([]string(nil), args[:n]...)
	out = append(out, "-address="+addr)
	return append(out, args[n:]...)
}

func isVerbPrefix(s string) bool {
	for _, v := range verbs {
		if v.name == s || strings.HasPrefix(v.name, s+" ") {
			return true
		}
	}
	return false
}

// wantLines fails unless out contains each line, in order.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	rest := out
	for _, l := range lines {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("output lacks %q (in order)\n--- output ---\n%s", l, out)
		}
		rest = rest[i+len(l):]
	}
}

package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// recorded is one request the fake agent received.
type recorded struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   string
}

// reply is a canned answer.
type reply struct {
	Status  int
	Headers map[string]string
	Body    string
}

// fakeAgent is an httptest server that answers "METHOD /path" with canned
// replies and records every request, so tests can check both what the
// client sent and how it read the answer.
type fakeAgent struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies map[string]reply
	reqs    []recorded
}

func newFakeAgent(t *testing.T) (*fakeAgent, *Client) {
	t.Helper()
	f := &fakeAgent{t: t, replies: map[string]reply{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	c, err := NewClient(&Config{Address: f.srv.URL, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *fakeAgent) on(route string, r reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies[route] = r
}

func (f *fakeAgent) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body)})
	rep, ok := f.replies[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if !ok {
		http.Error(w, "no route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	for k, v := range rep.Headers {
		w.Header().Set(k, v)
	}
	if rep.Status == 0 {
		rep.Status = http.StatusOK
	}
	w.WriteHeader(rep.Status)
	_, _ = io.WriteString(w, rep.Body)
}

func (f *fakeAgent) last() recorded {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		f.t.Fatal("no request received")
	}
	return f.reqs[len(f.reqs)-1]
}

package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigPrefersDroverEnvThenNomadEnvThenDefault(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"nothing set uses the dev agent address", nil, DefaultAddress},
		{"NOMAD_ADDR is honoured", map[string]string{"NOMAD_ADDR": "http://n:1"}, "http://n:1"},
		{"DROVER_ADDR wins over NOMAD_ADDR", map[string]string{"NOMAD_ADDR": "http://n:1", "DROVER_ADDR": "http://d:2"}, "http://d:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConfigFromEnv(envOf(tt.env)).Address; got != tt.want {
				t.Errorf("address %q, want %q", got, tt.want)
			}
			c, err := NewClient(&Config{Getenv: envOf(tt.env)})
			if err != nil {
				t.Fatal(err)
			}
			if c.Address() != tt.want {
				t.Errorf("client address %q, want %q", c.Address(), tt.want)
			}
		})
	}
}

func TestNewClientAcceptsABareHostPortAndRejectsOtherSchemes(t *testing.T) {
	c, err := NewClient(&Config{Address: "127.0.0.1:4646"})
	if err != nil || c.Address() != "http://127.0.0.1:4646" {
		t.Fatalf("bare host:port: %v %v", c, err)
	}
	if _, err := NewClient(&Config{Address: "ftp://x"}); err == nil {
		t.Fatal("ftp address accepted")
	}
}

func TestQueryOptionsBecomeNomadQueryParameters(t *testing.T) {
	f, _ := newFakeAgent(t)
	c, err := NewClient(&Config{Address: f.srv.URL, Namespace: "team", Region: "eu", SecretID: "tok", Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	f.on("GET /v1/jobs", reply{Body: `[]`})

	if _, _, err := c.Jobs().List(nil); err != nil {
		t.Fatal(err)
	}
	req := f.last()
	if req.Query.Get("namespace") != "team" || req.Query.Get("region") != "eu" || req.Header.Get("X-Nomad-Token") != "tok" {
		t.Errorf("client defaults not sent: %v %v", req.Query, req.Header)
	}
	if req.Query.Has("index") || req.Query.Has("wait") || req.Query.Has("stale") {
		t.Errorf("a plain read sent blocking parameters: %v", req.Query)
	}

	q := &QueryOptions{Namespace: "other", AllowStale: true, WaitIndex: 42, WaitTime: 1500 * time.Millisecond,
		Prefix: "we", Params: map[string]string{"x": "y"}, AuthToken: "t2"}
	if _, _, err := c.Jobs().List(q); err != nil {
		t.Fatal(err)
	}
	req = f.last()
	want := map[string]string{"namespace": "other", "region": "eu", "index": "42", "wait": "1500ms", "prefix": "we", "x": "y"}
	for k, v := range want {
		if got := req.Query.Get(k); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	if !req.Query.Has("stale") {
		t.Error("stale not sent")
	}
	if req.Header.Get("X-Nomad-Token") != "t2" {
		t.Errorf("token %q, want the per-request one", req.Header.Get("X-Nomad-Token"))
	}
}

func TestQueryMetaComesFromNomadHeaders(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/jobs", reply{Body: `[]`, Headers: map[string]string{
		"X-Nomad-Index": "1234", "X-Nomad-LastContact": "250", "X-Nomad-KnownLeader": "true", "X-Nomad-NextToken": "nt",
	}})
	_, qm, err := c.Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if qm.LastIndex != 1234 || qm.LastContact != 250*time.Millisecond || !qm.KnownLeader || qm.NextToken != "nt" {
		t.Errorf("meta %+v", qm)
	}
	if qm.RequestTime <= 0 {
		t.Error("request time not measured")
	}

	f.on("GET /v1/jobs", reply{Body: `[]`})
	if _, qm, err = c.Jobs().List(nil); err != nil || qm.LastIndex != 0 || qm.KnownLeader {
		t.Errorf("missing headers: meta %+v err %v", qm, err)
	}

	f.on("GET /v1/jobs", reply{Body: `[]`, Headers: map[string]string{"X-Nomad-Index": "abc"}})
	if _, _, err = c.Jobs().List(nil); err == nil || !strings.Contains(err.Error(), "X-Nomad-Index") {
		t.Errorf("malformed index header: err %v", err)
	}
}

func TestWriteMetaCarriesTheIndex(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("PUT /v1/jobs", reply{Body: `{"EvalID":"e"}`, Headers: map[string]string{"X-Nomad-Index": "77"}})
	_, wm, err := c.Jobs().Register(&Job{ID: new("web")}, &WriteOptions{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if wm.LastIndex != 77 {
		t.Errorf("write index %d", wm.LastIndex)
	}
	if f.last().Query.Get("namespace") != "ns" {
		t.Errorf("write namespace not sent: %v", f.last().Query)
	}
}

func TestErrorResponsesKeepStatusCodeAndBody(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/job/nope", reply{Status: http.StatusNotFound, Body: "job not found\n"})
	_, _, err := c.Jobs().Info("nope", nil)
	var ure *UnexpectedResponseError
	if !errors.As(err, &ure) {
		t.Fatalf("err %T %v, want *UnexpectedResponseError", err, err)
	}
	if ure.StatusCode != 404 || ure.Body != "job not found" || ure.Method != "GET" || ure.Path != "/v1/job/nope" {
		t.Errorf("error %+v", ure)
	}
	if !IsNotFound(err) || HasStatusCode(err, 500) {
		t.Error("status code helpers disagree with the error")
	}
	if err.Error() != "Unexpected response code: 404 (job not found)" {
		t.Errorf("message %q", err.Error())
	}

	f.on("PUT /v1/jobs", reply{Status: http.StatusBadRequest, Body: "Enforcing job modify index 3: job exists with conflicting job modify index: 4"})
	_, _, err = c.Jobs().EnforceRegister(&Job{ID: new("web")}, 3, nil)
	if !HasStatusCode(err, 400) || !strings.Contains(err.Error(), "conflicting job modify index") {
		t.Errorf("register error %v", err)
	}
}

func TestUnreachableAgentIsAnErrorNotAHang(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	c, _ := NewClient(&Config{Address: addr, Getenv: envOf(nil)})
	if _, _, err := c.Jobs().List(nil); err == nil {
		t.Fatal("no error from a closed agent")
	}
}

func TestTimeoutBoundsPlainRequestsButNotTheBlockingWait(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("index") == "" {
			<-release
		} else {
			time.Sleep(150 * time.Millisecond) // a blocking query that waits, then answers
		}
		_, _ = io.WriteString(w, `[]`)
	}))
	defer srv.Close()
	defer close(release)
	c, _ := NewClient(&Config{Address: srv.URL, Timeout: 100 * time.Millisecond, Getenv: envOf(nil)})

	if _, _, err := c.Jobs().List(nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("plain request: err %v, want a deadline error", err)
	}
	if _, _, err := c.Jobs().List(&QueryOptions{WaitIndex: 5, WaitTime: time.Second}); err != nil {
		t.Errorf("blocking query cut short by the request timeout: %v", err)
	}
}

func TestContextCancelsARequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	c, _ := NewClient(&Config{Address: srv.URL, Getenv: envOf(nil)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Jobs().List((&QueryOptions{}).WithContext(ctx)); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestFlexTimeDecodesStringsAndNanoseconds(t *testing.T) {
	for in, want := range map[string]time.Time{
		`"2024-01-02T03:04:05Z"`: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		`1704164645000000000`:    time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		`0`:                      {},
		`null`:                   {},
	} {
		var ft FlexTime
		if err := ft.UnmarshalJSON([]byte(in)); err != nil || !ft.Equal(want) {
			t.Errorf("%s: got %v err %v, want %v", in, ft.Time, err, want)
		}
	}
	var ft FlexTime
	if err := ft.UnmarshalJSON([]byte(`true`)); err == nil {
		t.Error("a boolean decoded as a time")
	}
}

// The finding: the CLI had no bound against an agent that never answers.
// Every request that is not a blocking query or a followed stream is
// bounded, streams until the agent answers, and the error says how long
// it waited and how to wait longer.
func TestAnAgentThatNeverAnswersIsATimeoutSayingHowToWaitLonger(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	c, err := NewClient(&Config{Address: srv.URL, Getenv: envOf(map[string]string{EnvHTTPTimeout: "150ms"})})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		var te *TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("%s: want a *TimeoutError, got %v", what, err)
		}
		for _, want := range []string{"did not answer within 150ms", "set DROVER_HTTP_TIMEOUT"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %q should mention %q", what, err, want)
			}
		}
	}
	_, _, err = c.Jobs().List(nil)
	check("a read", err)
	_, err = c.AllocFS().Cat("a", "x", nil)
	check("a stream the agent never opens", err)
}

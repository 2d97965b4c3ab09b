package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/drover-sched/drover/ui"
)

// The agent serves the UI where Nomad's CLI links point, with its CSP,
// and sends its root there; the API beside it is unchanged.
func TestAgentServesTheWebUI(t *testing.T) {
	a := NewTestAgent(t, nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := noRedirect.Get(a.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /: %d Location %q, want 307 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}

	for _, path := range []string{"/ui/", "/ui/jobs/web@default", "/ui/allocations/0b3c", "/ui/clients", "/ui/assets/js/app.js"} {
		resp, err := http.Get(a.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != ui.CSP {
			t.Errorf("GET %s: %d CSP %q; want 200 with the UI's CSP", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
	}

	resp, err = http.Get(a.URL + "/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("Content-Security-Policy") != "" {
		t.Errorf("GET /v1/jobs: %d %q CSP %q; the API must be untouched by the UI", resp.StatusCode,
			resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"))
	}
	resp, err = http.Get(a.URL + "/v1/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/nope: %d, want 404 (not the UI)", resp.StatusCode)
	}
}

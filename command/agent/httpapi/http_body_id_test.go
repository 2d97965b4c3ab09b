package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestABodyIDMustBeThePathsOrEmpty(t *testing.T) {
	for _, tc := range []struct {
		body, want, err string
	}{
		{"", "web", ""},
		{"web", "web", ""},
		{"other", "other", `DeploymentID "other" in the body does not match "web" in the path`},
	} {
		r := httptest.NewRequest(http.MethodPost, "/v1/deployment/pause/web", nil)
		r.SetPathValue("id", "web")
		id := tc.body
		err := checkBodyID(r, "DeploymentID", &id)
		if tc.err == "" && err != nil {
			t.Fatalf("body %q: %v", tc.body, err)
		}
		if tc.err != "" && (err == nil || err.Error() != tc.err || errorStatus(err) != http.StatusBadRequest) {
			t.Fatalf("body %q: got %v, want a 400 %q", tc.body, err, tc.err)
		}
		if id != tc.want {
			t.Fatalf("body %q: the ID is %q afterwards, want %q", tc.body, id, tc.want)
		}
	}
}

package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestQueryOneAndPutOneDecodeOneValueWithItsMeta(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Nomad-Index", "7")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/thing":
			_, _ = io.WriteString(w, `{"Name":"got"}`)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/things":
			_, _ = io.WriteString(w, `[{"Name":"a"},{"Name":"b"}]`)
		case r.Method == http.MethodPut && r.URL.Path == "/v1/thing":
			b, _ := io.ReadAll(r.Body)
			_, _ = w.Write(b) // echo: the body sent is what decodes
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c, err := NewClient(&Config{Address: srv.URL, Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	type thing struct{ Name string }

	got, qm, err := queryOne[thing](c, "/v1/thing", nil)
	if err != nil || got.Name != "got" || qm.LastIndex != 7 {
		t.Fatalf("query: %+v %+v %v", got, qm, err)
	}
	list, qm, err := queryList[*thing](c, "/v1/things", nil)
	if err != nil || len(list) != 2 || list[1].Name != "b" || qm.LastIndex != 7 {
		t.Fatalf("list: %+v %+v %v", list, qm, err)
	}
	put, wm, err := putOne[thing](c, "/v1/thing", thing{Name: "sent"}, nil)
	if err != nil || put.Name != "sent" || wm.LastIndex != 7 {
		t.Fatalf("put: %+v %+v %v", put, wm, err)
	}
	if got, qm, err := queryOne[thing](c, "/v1/other", nil); err == nil || got != nil || qm != nil {
		t.Fatalf("a failed query gave %+v %+v %v, want only an error", got, qm, err)
	}
	if got, wm, err := putOne[thing](c, "/v1/other", nil, nil); err == nil || got != nil || wm != nil {
		t.Fatalf("a failed put gave %+v %+v %v, want only an error", got, wm, err)
	}
}

package api

import (
	"context"
	"maps"
	"testing"
)

func TestOptionCopiesLeaveTheCallersOptionsAlone(t *testing.T) {
	q := &QueryOptions{Namespace: "ns", Params: map[string]string{"a": "1"}}
	c := withParams(q, "b", "2", "a", "3")
	if want := map[string]string{"a": "3", "b": "2"}; !maps.Equal(c.Params, want) || c.Namespace != "ns" {
		t.Fatalf("copy %+v, want namespace ns and params %v", c, want)
	}
	if want := map[string]string{"a": "1"}; !maps.Equal(q.Params, want) {
		t.Fatalf("the caller's params changed to %v", q.Params)
	}
	if c := withParams(nil, "k", "v"); c == nil || c.Params["k"] != "v" {
		t.Fatalf("from nil options: %+v", c)
	}

	w := &WriteOptions{Region: "r", Params: map[string]string{"x": "1"}}
	cw := withParam(w, "purge", "true")
	if cw.Region != "r" || cw.Params["purge"] != "true" || cw.Params["x"] != "1" || len(w.Params) != 1 {
		t.Fatalf("write copy %+v of %+v", cw, w)
	}
	if cw := withParam(nil, "k", "v"); cw == nil || cw.Params["k"] != "v" {
		t.Fatalf("from nil write options: %+v", cw)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if qc := q.WithContext(ctx); qc.context() != ctx || q.ctx != nil || qc.Namespace != "ns" {
		t.Fatal("QueryOptions.WithContext changed the caller's options or lost fields")
	}
	if wc := (*WriteOptions)(nil).WithContext(ctx); wc.context() != ctx {
		t.Fatal("WriteOptions.WithContext of nil options lost the context")
	}
}

package taskenv

import "testing"

func TestWithAddsVariablesOnTopWithoutChangingTheOriginal(t *testing.T) {
	node, alloc, task := fixture()
	e := Build(node, alloc, task, "global", Dirs{}, nil)
	w := e.With(map[string]string{"LISTEN": "from-template", "APP_MODE": "prod"})
	if v, _ := w.Get("LISTEN"); v != "from-template" {
		t.Fatalf("LISTEN = %q, want the template's value to win over the env block", v)
	}
	if got := w.ReplaceEnv("${APP_MODE}:${NOMAD_ALLOC_ID}:${attr.kernel.name}"); got != "prod:abcdef12-3456:linux" {
		t.Fatalf("interpolated %q", got)
	}
	if _, ok := e.Get("APP_MODE"); ok {
		t.Fatal("With changed the environment it was called on")
	}
	if v, _ := e.Get("LISTEN"); v != "127.0.0.1:25000" {
		t.Fatalf("original LISTEN = %q", v)
	}
}

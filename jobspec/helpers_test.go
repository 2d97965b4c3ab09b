package jobspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
)

// parseString parses src as a job file named name with default settings.
func parseString(t *testing.T, name, src string) (*api.Job, error) {
	t.Helper()
	return ParseWithConfig(&ParseConfig{Path: name, Body: []byte(src), Strict: true})
}

// mustParse parses src and fails the test on error.
func mustParse(t *testing.T, src string) *api.Job {
	t.Helper()
	job, err := parseString(t, "job.hcl", src)
	if err != nil {
		t.Fatalf("unexpected error:\n%v", err)
	}
	return job
}

// mustParseFile parses a file from testdata (or a path relative to the
// package) and fails the test on error.
func mustParseFile(t *testing.T, path string) *api.Job {
	t.Helper()
	if !strings.Contains(path, "/") {
		path = filepath.Join("testdata", path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	job, err := Parse(path, f)
	if err != nil {
		t.Fatalf("unexpected error:\n%v", err)
	}
	return job
}

// assertEqual compares with reflect.DeepEqual, which also tells int from
// float64 in driver config, and shows the difference as indented JSON.
func assertEqual(t *testing.T, want, got any) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	w, _ := json.MarshalIndent(want, "", "  ")
	g, _ := json.MarshalIndent(got, "", "  ")
	if string(w) == string(g) {
		t.Fatalf("values differ only in Go types (e.g. int vs float64):\n got: %#v\nwant: %#v", got, want)
	}
	t.Fatalf("mismatch (-want +got):\n%s", lineDiff(string(w), string(g)))
}

// lineDiff is a small line diff: it prints the lines that differ between
// the first and last common lines, which is enough to find a wrong field.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	start := 0
	for start < len(wl) && start < len(gl) && wl[start] == gl[start] {
		start++
	}
	we, ge := len(wl), len(gl)
	for we > start && ge > start && wl[we-1] == gl[ge-1] {
		we--
		ge--
	}
	var b strings.Builder
	from := max(start-3, 0)
	for _, l := range wl[from:start] {
		b.WriteString("  " + l + "\n")
	}
	for _, l := range wl[start:we] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range gl[start:ge] {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}

// assertErrorContains fails unless err is an *Error whose text contains
// every one of wants.
func assertErrorContains(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error containing %q, got none", wants)
	}
	if _, ok := err.(*Error); !ok {
		t.Errorf("error is %T, want *jobspec.Error", err)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

// inGroup wraps body in job "j" { group "g" { ... } }.
func inGroup(body string) string {
	return "job \"j\" {\n  group \"g\" {\n" + body + "\n  }\n}\n"
}

// inTask wraps body in job "j" { group "g" { task "t" { ... } } }.
func inTask(body string) string {
	return inGroup("    task \"t\" {\n" + body + "\n    }")
}

package fuzzseed

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Files returns the contents of every file matching the glob patterns
// (relative to the test's package directory), in a stable order;
// directories that match are skipped. A pattern
// that matches nothing fails the test: a seed corpus that silently shrank
// after a file moved would make the target weaker without anyone noticing.
func Files(tb testing.TB, patterns ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, p := range patterns {
		names, err := filepath.Glob(p)
		if err != nil {
			tb.Fatalf("fuzzseed: pattern %q: %v", p, err)
		}
		if len(names) == 0 {
			tb.Fatalf("fuzzseed: pattern %q matches no file", p)
		}
		sort.Strings(names)
		for _, name := range names {
			if fi, err := os.Stat(name); err == nil && fi.IsDir() {
				continue // testdata/fuzz, say
			}
			b, err := os.ReadFile(name)
			if err != nil {
				tb.Fatalf("fuzzseed: %v", err)
			}
			out = append(out, b)
		}
	}
	return out
}

// GoStringLiterals returns the string literals in the Go files matching
// pattern for which keep returns true, each once, in file order. Tests
// write their inputs (job files, JSON bodies, config) inline as raw
// strings; this turns them into seeds.
func GoStringLiterals(tb testing.TB, pattern string, keep func(string) bool) []string {
	tb.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatalf("fuzzseed: pattern %q: %v", pattern, err)
	}
	if len(names) == 0 {
		tb.Fatalf("fuzzseed: pattern %q matches no file", pattern)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	var out []string
	fset := token.NewFileSet()
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatalf("fuzzseed: %v", err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || seen[s] || !keep(s) {
				return true
			}
			seen[s] = true
			out = append(out, s)
			return true
		})
	}
	return out
}

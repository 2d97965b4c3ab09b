package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The drover binary carries no test code: neither Go's testing package
// (which a non-test file importing "testing" pulls in, and with it the
// test flags) nor Drover's own test helpers and fakes, which live in
// _test.go files or in packages named for tests (…test, test…, testutil)
// that only tests import. The check is on the main package's dependencies
// as the go tool resolves them, so a helper reached through any chain of
// imports, or through a dependency outside the module, is caught.
func TestBinaryHasNoTestCode(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go tool is not on PATH (%v): cannot list the binary's dependencies", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps .: %v\n%s", err, stderr)
	}
	imports := parseDeps(t, out)
	// hashicorp/raft keeps its test cluster in a non-test file
	// (testing.go), so every program built with raft links the testing
	// package. That is the library's test code, not Drover's, and none of
	// it is reachable from Drover's: the check ignores that one edge and
	// still fails if anything else imports testing. (A patched copy of
	// raft without the file would cost a fork of the consensus library to
	// drop one file.)
	imports[raftModule] = slicesWithout(imports[raftModule], "testing")
	if _, ok := imports[modulePath]; !ok {
		t.Fatalf("go list -deps . did not list the main package %s", modulePath)
	}
	reachable := reachableFrom(imports, modulePath)
	var found []string
	for pkg := range imports {
		if isTestCode(pkg) && reachable[pkg] {
			found = append(found, pkg)
		}
	}
	sort.Strings(found)
	for _, pkg := range found {
		t.Errorf("the binary links test code: %s", strings.Join(importChain(imports, modulePath, pkg), " -> "))
	}
	if len(found) > 0 {
		t.Log("move test helpers into _test.go files or into a test-only package (see docs/testing.md)")
	}
}

// raftModule is the raft library, whose testing.go imports testing.
const raftModule = "github.com/hashicorp/raft"

// slicesWithout returns s without the elements equal to v.
func slicesWithout(s []string, v string) []string {
	out := make([]string, 0, len(s))
	for _, e := range s {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}

// reachableFrom is every package reachable from root through imports.
func reachableFrom(imports map[string][]string, root string) map[string]bool {
	seen := map[string]bool{root: true}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range imports[p] {
			if !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
	}
	return seen
}

// parseDeps reads go list's "path import import ..." lines into a map from
// each package to what it imports.
func parseDeps(t *testing.T, out []byte) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		imports[fields[0]] = fields[1:]
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading go list output: %v", err)
	}
	return imports
}

// isTestCode reports whether a package is test code: Go's testing package
// (and its sub-packages, such as testing/fstest), or a package of this
// module with a path element named for tests (nomadtest, testutil,
// testserver, ...). Drover's production packages have no such element.
func isTestCode(pkg string) bool {
	if pkg == "testing" || strings.HasPrefix(pkg, "testing/") {
		return true
	}
	if pkg != modulePath && !strings.HasPrefix(pkg, modulePath+"/") {
		return false
	}
	for _, elem := range strings.Split(strings.TrimPrefix(pkg, modulePath), "/") {
		if strings.HasPrefix(elem, "test") || strings.HasSuffix(elem, "test") {
			return true
		}
	}
	return false
}

// importChain returns the shortest chain of imports from one package to
// another (both included), so a failure names who pulled the package in.
func importChain(imports map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return []string{to}
}

func TestIsTestCode(t *testing.T) {
	for pkg, want := range map[string]bool{
		"testing":                            true,
		"testing/fstest":                     true,
		modulePath + "/nomad/nomadtest":      true,
		modulePath + "/helper/testutil/wait": true,
		modulePath + "/client/testclient":    true,
		modulePath + "/nomad":                false,
		modulePath + "/nomad/state":          false,
		"github.com/hashicorp/raft":          false,
		"github.com/example/nettest":         false,
		"testingx":                           false,
	} {
		if got := isTestCode(pkg); got != want {
			t.Errorf("isTestCode(%q) = %v, want %v", pkg, got, want)
		}
	}
}

func TestImportChainIsShortest(t *testing.T) {
	imports := map[string][]string{
		"main": {"a", "b"},
		"a":    {"c"},
		"b":    {"testing"},
		"c":    {"testing"},
	}
	got := strings.Join(importChain(imports, "main", "testing"), " -> ")
	if want := "main -> b -> testing"; got != want {
		t.Fatalf("importChain = %q, want %q", got, want)
	}
}

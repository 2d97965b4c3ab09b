package scheduler

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStayInsideTheScheduler checks DESIGN.md's rule for this
// package and its sub-packages: non-test code imports the standard
// library, structs, its own sub-packages and the pinned hashicorp
// libraries, never the server, the client or the API.
func TestImportsStayInsideTheScheduler(t *testing.T) {
	const module = "github.com/drover-sched/drover/"
	allowed := []string{module + "structs", module + "scheduler", "github.com/hashicorp/go-hclog", "github.com/hashicorp/go-memdb"}
	for _, dir := range []string{".", "reconciler", "feasible"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
					continue // standard library
				}
				ok := false
				for _, a := range allowed {
					if path == a || strings.HasPrefix(path, a+"/") {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}

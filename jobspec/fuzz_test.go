package jobspec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/httpapi"
	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/jobspec"
	"github.com/drover-sched/drover/nomad"
)

// fuzzMaxStack is the goroutine stack the target allows a parse. A Go
// stack overflow cannot be recovered, so the parsers' recursion is bounded
// before they run (CheckNesting, MaxNestingDepth); a file at that limit
// needs about a megabyte of stack. Lowering the process's limit from 1 GiB
// to this makes a way to recurse that the check misses crash the target
// with an input of a few KiB, which a fuzzer finds, instead of needing the
// hundreds of KiB that overflow a whole gigabyte.
const fuzzMaxStack = 16 << 20

// parseAllocBudget bounds what one parse may allocate: a fixed allowance for
// the parser's tables and the job itself, and a generous amount per input
// byte. The job files in testdata need about 250 bytes per input byte. An input
// that needs more makes the parser's memory grow faster than its input,
// which lets a small request to /v1/jobs/parse exhaust a server.
func parseAllocBudget(inputLen int) uint64 {
	return 16<<20 + 4<<10*uint64(inputLen)
}

// FuzzParse feeds job files, and variable files for them, to the parser the
// CLI and /v1/jobs/parse use. Whatever the input:
//
//   - the parse returns a job or a *jobspec.Error with at least one
//     problem that says something, and never panics or overflows a
//     stack far smaller than Go's (fuzzMaxStack), however deep the input
//     nests;
//   - it allocates at most parseAllocBudget;
//   - it is reproducible: a second parse gives the same job;
//   - a job that parses survives the trip the CLI makes to the API: its
//     JSON parses back to the same JSON;
//   - it can be canonicalized, converted to the servers' form and
//     validated without a panic.
func FuzzParse(f *testing.F) {
	for _, seed := range parseSeeds(f) {
		f.Add(seed, []byte(nil))
	}
	f.Add([]byte(`variable "n" { type = number }
variable "tags" { type = list(string) }
job "j" {
  datacenters = var.tags
  group "g" {
    count = var.n
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}`), []byte("n = 3\ntags = [\"dc1\", \"dc2\"]\n"))
	f.Add([]byte(`variable "n" { default = 1 }
job "j" { group "g" { count = var.n } }`), []byte(`{"n": 2}`))

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src, vars []byte) {
		defer debug.SetMaxStack(debug.SetMaxStack(fuzzMaxStack))
		cfg := &jobspec.ParseConfig{Path: "fuzz.hcl", Body: src, Strict: true}
		if len(vars) > 0 {
			// As /v1/jobs/parse does with the request's Variables.
			name := "variables.hcl"
			if bytes.HasPrefix(bytes.TrimSpace(vars), []byte("{")) {
				name = "variables.json"
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, vars, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg.VarFiles = []string{path}
		}

		before := fuzzseed.AllocatedBytes()
		job, err := jobspec.ParseWithConfig(cfg)
		if used, budget := fuzzseed.AllocatedBytes()-before, parseAllocBudget(len(src)+len(vars)); used > budget {
			t.Fatalf("parsing %d bytes allocated %d MiB, more than the %d MiB budget",
				len(src)+len(vars), used>>20, budget>>20)
		}
		if err != nil {
			checkParseError(t, err)
			return
		}
		if job == nil {
			t.Fatal("no job and no error")
		}
		first := mustJSON(t, job)

		again, err := jobspec.ParseWithConfig(cfg)
		if err != nil {
			t.Fatalf("the second parse of the same input failed: %v", err)
		}
		if second := mustJSON(t, again); !bytes.Equal(first, second) {
			t.Fatalf("parsing the same input twice gave different jobs:\n%s\n%s", first, second)
		}

		// The CLI sends the parsed job to the API as JSON; that JSON is a
		// job file too, and must mean the same job.
		wrapped := append(append([]byte(`{"Job":`), first...), '}')
		back, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: "fuzz.json", Body: wrapped, Strict: true})
		if err != nil {
			t.Fatalf("the parsed job's own JSON does not parse: %v\n%s", err, first)
		}
		if third := mustJSON(t, back); !bytes.Equal(first, third) {
			t.Fatalf("the parsed job changed on its way through JSON:\n%s\n%s", first, third)
		}

		validate(t, back)
	})
}

// validate does what the servers do with a submitted job, which must give
// a verdict, not a panic.
func validate(t *testing.T, job *api.Job) {
	job.Canonicalize()
	sj := httpapi.ApiJobToStructJob(job)
	sj.Canonicalize()
	if err := sj.Validate(); err != nil {
		if err.Error() == "" {
			t.Fatal("validation failed with an empty error")
		}
		return
	}
	if err := nomad.ValidatePeriodic(sj); err != nil && err.Error() == "" {
		t.Fatal("periodic validation failed with an empty error")
	}
}

// checkParseError holds a parse error to the package's promise: a
// *jobspec.Error whose every problem says what is wrong.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	var perr *jobspec.Error
	if !errors.As(err, &perr) {
		t.Fatalf("the error is a %T, want *jobspec.Error: %v", err, err)
	}
	if !perr.Diagnostics.HasErrors() {
		t.Fatalf("a parse error without an error diagnostic: %#v", perr.Diagnostics)
	}
	for _, d := range perr.Diagnostics {
		if d.Severity == hcl.DiagError && strings.TrimSpace(d.Summary) == "" {
			t.Fatalf("a problem without a summary: %#v", d)
		}
	}
	if strings.TrimSpace(err.Error()) == "" {
		t.Fatal("the error's text is empty")
	}
}

func mustJSON(t *testing.T, job *api.Job) []byte {
	t.Helper()
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatalf("a parsed job cannot be encoded as JSON: %v", err)
	}
	return b
}

// parseSeeds are the job files of the repository and the job files its
// tests write inline.
func parseSeeds(tb testing.TB) [][]byte {
	seeds := fuzzseed.Files(tb,
		"../examples/*.hcl",
		"testdata/*",
		"../command/agent/testdata/nomad-jobs/*.hcl",
	)
	for _, s := range fuzzseed.GoStringLiterals(tb, "*_test.go", looksLikeJobFile) {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// looksLikeJobFile keeps test literals that hold a job, variable or locals
// block: a whole job file or the start of one.
func looksLikeJobFile(s string) bool {
	for _, kw := range []string{"job ", "variable ", "locals ", "group ", "task "} {
		if strings.Contains(s, kw) && strings.Contains(s, "{") {
			return true
		}
	}
	return false
}

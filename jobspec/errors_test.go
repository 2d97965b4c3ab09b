package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func TestMalformedFilesGiveErrorsAtTheRightPositions(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		wants []string
	}{
		{"a misspelt argument gets a suggestion", `job "web" {
  group "web" {
    task "server" {
      driver = "raw_exec"

      resources {
        cpu    = 100
        memroy = 64
      }
    }
  }
}`, []string{`web.hcl:8,9-15: Unsupported argument; An argument named "memroy" is not expected here. Did you mean "memory"?`}},
		{"an unknown block", `job "web" {
  sprocket {}
}`, []string{`web.hcl:2,3-11: Unsupported block type; Blocks of type "sprocket" are not expected here.`}},
		{"no job block", `variable "x" { default = 1 }`,
			[]string{`web.hcl:1,1-1: Missing job block; A job file must contain one job block`}},
		{"an empty file", ``, []string{`web.hcl:1,1-1: Missing job block`}},
		{"two job blocks", "job \"a\" {}\njob \"b\" {}\n",
			[]string{`web.hcl:2,1-8: Duplicate job block; A job file holds exactly one job; another job block is at web.hcl:1,1-8.`}},
		{"a job without a label", "job {}\n", []string{`web.hcl:1,5-6: Missing name for job; All job blocks must have 1 labels (name).`}},
		{"a syntax error", "job \"a\" {\n  group \"g\" {\n}\n",
			[]string{`web.hcl:1,9-10: Unclosed configuration block`}},
		{"a block given twice that may appear once", inGroup("restart {}\nrestart {}"),
			[]string{`web.hcl:4,1-8: Duplicate restart block; Only one restart block is allowed here; another was defined at web.hcl:3,1-8.`}},
		{"meta as both argument and block", inGroup("meta = { a = \"1\" }\nmeta { b = \"2\" }"),
			[]string{`web.hcl:4,1-5: Duplicate meta definition; meta is already set as an argument at web.hcl:3,1-19`}},
		{"a duration that does not parse", inTask(`kill_timeout = "5 minutes"`),
			[]string{`web.hcl:4,16-27: Invalid duration; Attribute "kill_timeout" must be a duration such as "30s", "5m" or "1h30m"`}},
		{"a duration of the wrong type", inTask(`kill_timeout = ["5s"]`),
			[]string{`Inappropriate value for attribute "kill_timeout": a duration string such as "30s" is required.`}},
		{"a count that is not a number", inGroup(`count = "three"`),
			[]string{`web.hcl:3,9-16: Incorrect attribute value type; Inappropriate value for attribute "count": a number is required.`}},
		{"a weight out of range", inGroup("affinity {\n  weight = 500\n}"),
			[]string{`web.hcl:4,12-15: Invalid attribute value; Invalid value for attribute "weight"`}},
		{"a lifecycle without hook", inTask("lifecycle {}"),
			[]string{`web.hcl:4,11-11: Missing required argument; The argument "hook" is required`}},
		{"two ways of choosing a constraint operator", inGroup("constraint {\n  operator = \"=\"\n  regexp = \"x\"\n}"),
			[]string{`web.hcl:5,3-15: Conflicting operators; Both "operator" and "regexp" choose the operator`}},
		{"an unknown function", `job "a" { region = nope("x") }`,
			[]string{`web.hcl:1,20-24: Call to unknown function; There is no function named "nope".`}},
		{"a volume defined twice", inGroup("volume \"a\" {}\nvolume \"a\" {}"),
			[]string{`web.hcl:4,8-11: Duplicate volume`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseString(t, "web.hcl", tc.src)
			assertErrorContains(t, err, tc.wants...)
		})
	}
}

func TestAllProblemsOfAFileAreReportedTogether(t *testing.T) {
	_, err := parseString(t, "web.hcl", inTask("drivr = \"x\"\nuser = 5\nkill_timeout = \"x\""))
	assertErrorContains(t, err,
		`web.hcl:4,1-6: Unsupported argument; An argument named "drivr" is not expected here. Did you mean "driver"?`,
		`web.hcl:6,16-19: Invalid duration`)
	if n := strings.Count(err.Error(), "\n") + 1; n != 2 {
		t.Errorf("got %d error lines, want 2 (user = 5 converts to a string):\n%v", n, err)
	}
}

func TestErrorsCarryDiagnostics(t *testing.T) {
	_, err := parseString(t, "web.hcl", inGroup("count = \"x\""))
	perr, ok := err.(*Error)
	if !ok {
		t.Fatalf("error is %T, want *Error", err)
	}
	d := perr.Diagnostics[0]
	if d.Severity != hcl.DiagError || d.Subject == nil || d.Subject.Start.Line != 3 {
		t.Errorf("diagnostic = %+v", d)
	}
}

// Bug found by FuzzParse (testdata/fuzz/FuzzParse/594d693d5358f8ee): bytes
// that are not UTF-8 were accepted, in a map key or a string, and became
// U+FFFD when the parsed job was sent to the servers as JSON, so the job
// stored was not the job written. Job and variable files must be UTF-8.
func TestFilesThatAreNotUTF8AreRefusedAtTheFirstBadByte(t *testing.T) {
	src := "job \"j\" {\n  meta = {\n    \"r\xe9gion\" = \"eu\"\n  }\n}\n"
	_, err := parseString(t, "job.hcl", src)
	assertErrorContains(t, err, "job.hcl:3,7", "Invalid character encoding", "0xe9", "UTF-8")

	_, err = parseString(t, "job.hcl", `{"job": {"j": {"meta": {"k": "caf`+"\xe9"+`"}}}}`)
	assertErrorContains(t, err, "Invalid character encoding")

	dir := t.TempDir()
	vars := filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(vars, []byte("region = \"\xff\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ParseWithConfig(&ParseConfig{Path: "job.hcl", Body: []byte("variable \"region\" {}\njob \"j\" {\n  region = var.region\n}\n"), VarFiles: []string{vars}})
	assertErrorContains(t, err, "vars.hcl:1,11", "Invalid character encoding")

	// Text that is UTF-8 is fine, whatever the script.
	job := mustParse(t, "job \"j\" {\n  meta = {\n    \"région\" = \"東京\"\n  }\n}\n")
	assertEqual(t, map[string]string{"région": "東京"}, job.Meta)
}

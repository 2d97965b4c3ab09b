package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func nested(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func TestCheckNestingCountsEveryWayHCLRecurses(t *testing.T) {
	const limit = 6
	cases := []struct {
		name string
		src  string
		ok   bool
	}{
		{"lists at the limit", "x = " + nested("[", "1", "]", limit), true},
		{"lists one deeper", "x = " + nested("[", "1", "]", limit+1), false},
		{"blocks one deeper", nested("a {\n", "", "}\n", limit+1), false},
		{"objects one deeper", "x = " + nested("{ a = ", "1", " }", limit+1), false},
		{"parentheses one deeper", "x = " + nested("(", "1", ")", limit+1), false},
		{"function calls one deeper", "x = " + nested("max(1, ", "1", ")", limit+1), false},
		// Each template level is a quote and an interpolation.
		{"templates at the limit", "x = " + nested(`"${`, "1", `}"`, limit/2), true},
		{"templates one deeper", "x = " + nested(`"${`, "1", `}"`, limit/2) + "\ny = \"${\"${\"${\"${1}\"}\"}\"}\"", false},
		{"if directives one deeper", "x = \"" + nested("%{ if true }", "a", "%{ endif }", limit) + "\"", false},
		{"heredoc templates one deeper", "x = <<EOT\n" + nested("${[", "1", "]}", limit/2) + "\nEOT\n", false},
		{"a conditional chain", "x = " + strings.Repeat("true ? 1 : ", limit+1) + "2", false},
		{"a conditional chain over lines inside parentheses", "x = (" + strings.Repeat("true ? 1 :\n", limit+1) + "2)", false},
		{"repeated unary not", "x = " + strings.Repeat("!", limit+1) + "true", false},
		{"repeated unary minus", "x = " + strings.Repeat("-", limit+1) + "1", false},
		// The parser reads a chain of binary operators in a loop, but it
		// builds a tree one level deeper per operator, and evaluating or
		// walking that tree recurses once per level.
		{"a chain of additions", "x = 1" + strings.Repeat(" + 1", limit+1), false},
		{"a chain of binary minus", "x = 1" + strings.Repeat(" - 1", limit+1), false},
		{"a chain of comparisons and logic", "x = 1 == 1" + strings.Repeat(" && 1 < 2 || 2 >= 1", limit), false},
		{"a chain of products", "x = 2" + strings.Repeat(" * 2", limit+1), false},
		{"a binary chain at the limit", "x = 1" + strings.Repeat(" + 1", limit), true},
		{"binary chains on separate lines do not add up", strings.Repeat("x = 1 + 1 + 1\n", 50), true},
		{"an index chain", "x = local.a" + strings.Repeat("[local.i]", limit+1), false},
		{"a splat chain", "x = local.a" + strings.Repeat("[*]", limit+1), false},
		{"an attribute splat chain", "x = local.a" + strings.Repeat(".*", limit+1), false},
		{"a full splat is not a product", "x = local.a[*].b", true},
		{"conditionals on separate lines do not add up", strings.Repeat("x = true ? 1 : 2\n", 50), true},
		{"list elements do not add up", "x = [" + strings.Repeat("!true, ", 50) + "true]", true},
		{"JSON at the limit", `{"x": ` + nested("[", "1", "]", limit-1) + `}`, true},
		{"JSON one deeper", `{"x": ` + nested("[", "1", "]", limit) + `}`, false},
		{"JSON brackets inside strings do not count", `{"x": "` + strings.Repeat("[{", 50) + `"}`, true},
		{"a template inside a JSON string", `{"x": "` + nested(`${[`, "1", `]}`, limit) + `"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckNesting([]byte(c.src), "f.hcl", limit)
			switch {
			case c.ok && err != nil:
				t.Fatalf("want accepted, got %v", err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), "Nesting too deep")):
				t.Fatalf("want refused as too deep, got %v", err)
			}
		})
	}
}

// The finding: a 200 KB body with a list nested 100,000 deep overflowed
// the parser's stack and took the whole agent down. It must be an error
// naming the line and the limit instead.
func TestParseRefusesDeepNestingBeforeTheParserRecurses(t *testing.T) {
	deep := 100_000
	cases := []struct {
		name, src, want string
	}{
		{"a list nested 100,000 deep", "job \"x\" {\n  meta = { a = " + nested("[", "1", "]", deep) + " }\n}\n",
			"input.hcl:2,"},
		{"100,000 unary operators", "job \"x\" {\n  region = " + strings.Repeat("!", deep) + "true\n}\n", "input.hcl:2,"},
		{"a conditional chain 100,000 long", "job \"x\" {\n  region = " + strings.Repeat("true ? 1 : ", deep) + "2\n}\n", "input.hcl:2,"},
		// Found from outside: a 1 MB file of 1+1+...+1 overflowed the
		// stack evaluating the sum and killed the agent through
		// /v1/jobs/parse; so did a chain of [*] splats.
		{"500,000 additions", "job \"x\" {\n  region = 1" + strings.Repeat("+1", 500_000) + "\n}\n", "input.hcl:2,"},
		{"300,000 splats", "job \"x\" {\n  region = local.a" + strings.Repeat("[*]", 300_000) + "\n}\n", "input.hcl:2,"},
		{"HCL's JSON syntax", `{"job": {"x": {"meta": ` + nested("[", "1", "]", deep) + `}}}`, "input.hcl:1,"},
		{"the API's JSON", `{"Job": {"ID": "x", "TaskGroups": [{"Tasks": [{"Config": ` + nested(`{"a":`, "1", "}", deep) + `}]}]}}`, "input.hcl:1,"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseWithConfig(&ParseConfig{Path: "input.hcl", Body: []byte(c.src)})
			assertErrorContains(t, err, c.want, "Nesting too deep", "more than 100 levels")
		})
	}
}

func TestParseRefusesDeepVariableValues(t *testing.T) {
	const job = "variable \"v\" {\n  type = list(any)\n  default = []\n}\njob \"x\" {}\n"
	deep := nested("[", "1", "]", 10_000)
	t.Run("from a variable file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "vars.hcl")
		if err := os.WriteFile(path, []byte("v = "+deep+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ParseWithConfig(&ParseConfig{Path: "job.hcl", Body: []byte(job), VarFiles: []string{path}})
		assertErrorContains(t, err, "vars.hcl:1,", "Nesting too deep")
	})
	t.Run("from a -var argument", func(t *testing.T) {
		_, err := ParseWithConfig(&ParseConfig{Path: "job.hcl", Body: []byte(job), ArgVars: []string{"v=" + deep}})
		assertErrorContains(t, err, "Nesting too deep")
	})
}

func TestNestingErrorDescribesDeepJSON(t *testing.T) {
	if msg := NestingError([]byte(`{"a": [[1]]}`), 3); msg != "" {
		t.Fatalf("shallow JSON refused: %s", msg)
	}
	msg := NestingError([]byte("{\n \"a\": [[[1]]]}"), 3)
	for _, want := range []string{"more than 3 levels", "line 2, column 9"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not mention %q", msg, want)
		}
	}
}

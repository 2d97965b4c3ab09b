package jobspec

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLocalsMayReferToEachOtherInAnyOrder(t *testing.T) {
	job := mustParse(t, `
locals {
  full = "${local.prefix}-${var.name}"
}
variable "name" { default = "web" }
locals {
  prefix = upper(local.env)
  env    = "prod"
}
job "j" {
  meta = {
    full = local.full
  }
}`)
	assertEqual(t, map[string]string{"full": "PROD-web"}, job.Meta)
}

func TestLocalsErrors(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		wants []string
	}{
		{"a cycle is reported with its path", `
locals {
  a = local.b
  b = local.a
}
job "j" {}`, []string{"job.hcl:3,3-4: Circular reference between locals; local.a refers back to itself: local.a -> local.b -> local.a."}},
		{"a duplicate local is reported", `
locals { a = 1 }
locals { a = 2 }
job "j" {}`, []string{"job.hcl:3,10-11: Duplicate local value"}},
		{"an unknown local is reported", `
locals { a = 1 }
job "j" { region = local.b }`, []string{"job.hcl:3,25-27: Unsupported attribute"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseString(t, "job.hcl", tc.src)
			assertErrorContains(t, err, tc.wants...)
		})
	}
}

func TestFunctionsAreAvailable(t *testing.T) {
	cases := []struct {
		expr string
		want string
	}{
		{`upper("a")`, "A"},
		{`lower("A")`, "a"},
		{`format("%s-%03d", "web", 7)`, "web-007"},
		{`join(",", ["a", "b"])`, "a,b"},
		{`join(",", split("-", "a-b"))`, "a,b"},
		{`join(",", concat(["a"], ["b"]))`, "a,b"},
		{`jsonencode(merge({a = 1}, {b = 2}))`, `{"a":1,"b":2}`},
		{`tostring(length([1, 2, 3]))`, "3"},
		{`lookup({a = "x"}, "b", "default")`, "default"},
		{`element(["a", "b"], 1)`, "b"},
		{`coalesce(null, "first")`, "first"},
		{`jsondecode("{\"k\": \"v\"}").k`, "v"},
		{`tostring(min(3, 1, 2) + max(3, 1, 2))`, "4"},
		{`join(",", [for i in range(3) : tostring(i)])`, "0,1,2"},
		{`regex("v([0-9]+)", "v42")[0]`, "42"},
		{`replace("a-b-c", "-", "_")`, "a_b_c"},
		{`replace("a1b22", "/[0-9]+/", "#")`, "a#b#"},
		{`trimspace("  x ")`, "x"},
		{`trimprefix("v1.2", "v")`, "1.2"},
		{`join(",", keys({b = 1, a = 2}))`, "a,b"},
		{`join(",", values({b = "1", a = "2"}))`, "2,1"},
		{`tostring(tonumber("5") + 1)`, "6"},
		{`tostring(tobool("true"))`, "true"},
		{`join(",", tolist(toset(["a", "a"])))`, "a"},
		{`tomap({a = "b"}).a`, "b"},
		{`tostring(contains(["a"], "a"))`, "true"},
		{`try(local.missing, "fallback")`, "fallback"},
		{`tostring(can(local.missing))`, "false"},
		{`base64encode("hi")`, "aGk="},
		{`sha256("")`, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			job := mustParse(t, "locals {\n  x = 1\n}\njob \"j\" {\n  region = "+tc.expr+"\n}\n")
			if *job.Region != tc.want {
				t.Errorf("%s = %q, want %q", tc.expr, *job.Region, tc.want)
			}
		})
	}
}

func TestFileFunctionNeedsAllowFS(t *testing.T) {
	path := writeFile(t, "job.hcl", "job \"j\" {\n  region = file(\"region.txt\")\n}\n")
	writeFileIn(t, path, "region.txt", "eu-west")

	_, err := ParseWithConfig(&ParseConfig{Path: path})
	assertErrorContains(t, err, "reading files is not allowed")

	job, err := ParseWithConfig(&ParseConfig{Path: path, AllowFS: true})
	if err != nil {
		t.Fatal(err)
	}
	if *job.Region != "eu-west" {
		t.Errorf("region = %q, want the file's content, read relative to the job file", *job.Region)
	}
}

// writeFileIn writes a file next to sibling.
func writeFileIn(t *testing.T, sibling, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(filepath.Dir(sibling), name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

package jobspec

import (
	"os"
	"path/filepath"
	"testing"
)

// varJob declares image (string, default), count (number) and dcs (list)
// and uses them.
const varJob = `
variable "image" {
  type    = string
  default = "redis:6"
}

variable "count" {
  type    = number
  default = 1
}

variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}

job "j" {
  datacenters = var.dcs

  group "g" {
    count = var.count

    task "t" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVariablesTakeValuesFromEachSourceInPrecedenceOrder(t *testing.T) {
	fileA := writeFile(t, "a.hcl", `image = "from-file-a"`)
	fileB := writeFile(t, "b.hcl", `image = "from-file-b"`)
	jsonFile := writeFile(t, "c.json", `{"image": "from-json-file"}`)

	cases := []struct {
		name  string
		cfg   ParseConfig
		image string
	}{
		{"the default applies when nothing else is given", ParseConfig{}, "redis:6"},
		{"NOMAD_VAR_ overrides the default", ParseConfig{
			Envs: []string{"PATH=/bin", "NOMAD_VAR_image=from-env"}}, "from-env"},
		{"a variable file overrides the environment", ParseConfig{
			Envs: []string{"NOMAD_VAR_image=from-env"}, VarFiles: []string{fileA}}, "from-file-a"},
		{"a later variable file overrides an earlier one", ParseConfig{
			VarFiles: []string{fileA, fileB}}, "from-file-b"},
		{"a JSON variable file works like an HCL one", ParseConfig{
			VarFiles: []string{jsonFile}}, "from-json-file"},
		{"-var overrides variable files", ParseConfig{
			VarFiles: []string{fileA}, ArgVars: []string{"image=from-arg"}}, "from-arg"},
		{"a later -var overrides an earlier one", ParseConfig{
			ArgVars: []string{"image=first", "image=second"}}, "second"},
		{"a -var value may contain equals signs", ParseConfig{
			ArgVars: []string{"image=a=b"}}, "a=b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Path, cfg.Body, cfg.Strict = "vars.hcl", []byte(varJob), true
			job, err := ParseWithConfig(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := job.TaskGroups[0].Tasks[0].Config["image"]; got != tc.image {
				t.Errorf("image = %v, want %v", got, tc.image)
			}
		})
	}
}

func TestVariableValuesFromStringsAreConvertedToTheDeclaredType(t *testing.T) {
	cases := []struct {
		name  string
		cfg   ParseConfig
		count int
		dcs   []string
	}{
		{"a number from the environment", ParseConfig{Envs: []string{"NOMAD_VAR_count=3"}}, 3, []string{"dc1"}},
		{"a number from -var", ParseConfig{ArgVars: []string{"count=4"}}, 4, []string{"dc1"}},
		{"a list from -var is read as an expression", ParseConfig{
			ArgVars: []string{`dcs=["east", "west"]`}}, 1, []string{"east", "west"}},
		{"a list from the environment is read as an expression", ParseConfig{
			Envs: []string{`NOMAD_VAR_dcs=["x"]`}}, 1, []string{"x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Path, cfg.Body = "vars.hcl", []byte(varJob)
			job, err := ParseWithConfig(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			if *job.TaskGroups[0].Count != tc.count {
				t.Errorf("count = %d, want %d", *job.TaskGroups[0].Count, tc.count)
			}
			assertEqual(t, tc.dcs, job.Datacenters)
		})
	}
}

func TestVariableErrors(t *testing.T) {
	declaringFile := writeFile(t, "declares.hcl", `variable "image" {}`)
	undeclaredInFile := writeFile(t, "extra.hcl", `nope = 1`)

	cases := []struct {
		name  string
		src   string
		cfg   ParseConfig
		wants []string
	}{
		{"a variable without default or value is unset", `
variable "region" {}
job "j" { region = var.region }`, ParseConfig{},
			[]string{`vars.hcl:2,1-18: Unset variable "region"`}},
		{"a value that does not fit the type is rejected", varJob, ParseConfig{ArgVars: []string{"count=many"}},
			[]string{"Invalid value for variable", `"count"`, "a number is required"}},
		{"a -var without equals sign is rejected", varJob, ParseConfig{ArgVars: []string{"image"}},
			[]string{`Invalid -var argument; The argument "image" must have the form name=value.`}},
		{"a -var for an undeclared variable is an error in strict mode", varJob,
			ParseConfig{ArgVars: []string{"nope=1"}, Strict: true},
			[]string{`Undefined -var variable; A value was given for "nope"`}},
		{"a variable file value for an undeclared variable is an error in strict mode", varJob,
			ParseConfig{VarFiles: []string{undeclaredInFile}, Strict: true},
			[]string{"extra.hcl:1,1-5: Undefined variable"}},
		{"a variable file may not declare variables", varJob, ParseConfig{VarFiles: []string{declaringFile}},
			[]string{"Variable declaration in a variable file"}},
		{"a missing variable file is reported", varJob, ParseConfig{VarFiles: []string{"/nonexistent.hcl"}},
			[]string{"Failed to read variable file"}},
		{"a default that does not fit the type is rejected", `
variable "n" {
  type    = number
  default = "x"
}
job "j" {}`, ParseConfig{}, []string{"vars.hcl:4,13-16: Invalid value for variable"}},
		{"a variable declared twice is rejected", `
variable "a" { default = 1 }
variable "a" { default = 2 }
job "j" {}`, ParseConfig{}, []string{"vars.hcl:3,1-13: Duplicate variable"}},
		{"a failing validation reports its message", `
variable "port" {
  type    = number
  default = 80
  validation {
    condition     = var.port > 1024
    error_message = "The port must be unprivileged."
  }
}
job "j" {}`, ParseConfig{}, []string{"vars.hcl:2,1-16: Invalid value for variable; The port must be unprivileged."}},
		{"an unknown reference to var is reported", `
variable "a" { default = 1 }
job "j" { region = var.b }`, ParseConfig{}, []string{`vars.hcl:3,23-25: Unsupported attribute`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Path, cfg.Body = "vars.hcl", []byte(tc.src)
			_, err := ParseWithConfig(&cfg)
			assertErrorContains(t, err, tc.wants...)
		})
	}
}

func TestUndeclaredVariablesAreIgnoredOutsideStrictMode(t *testing.T) {
	extra := writeFile(t, "extra.hcl", `nope = 1`)
	_, err := ParseWithConfig(&ParseConfig{
		Path: "vars.hcl", Body: []byte(varJob),
		ArgVars: []string{"nope=1"}, VarFiles: []string{extra}, Envs: []string{"NOMAD_VAR_nope=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUndeclaredEnvironmentVariablesAreIgnoredEvenInStrictMode(t *testing.T) {
	_, err := ParseWithConfig(&ParseConfig{
		Path: "vars.hcl", Body: []byte(varJob), Strict: true, Envs: []string{"NOMAD_VAR_nope=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVariablesBlockDeclaresVariablesWithDefaults(t *testing.T) {
	job := mustParse(t, `
variables {
  region = "eu"
  dcs    = ["a", "b"]
}
job "j" {
  region      = var.region
  datacenters = var.dcs
}`)
	if *job.Region != "eu" {
		t.Errorf("region = %q", *job.Region)
	}
	assertEqual(t, []string{"a", "b"}, job.Datacenters)
}

func TestVariableOfTypeAnyTakesWordsLiterallyAndExpressionsAsValues(t *testing.T) {
	src := []byte(`
variable "v" {
  type = any
}
job "j" {
  meta = { v = jsonencode(var.v) }
}`)
	cases := []struct{ arg, want string }{
		{"v=hello", `"hello"`},
		{`v=["a", 1]`, `["a",1]`},
		{"v=5", `5`},
	}
	for _, tc := range cases {
		t.Run(tc.arg, func(t *testing.T) {
			job, err := ParseWithConfig(&ParseConfig{Path: "v.hcl", Body: src, ArgVars: []string{tc.arg}})
			if err != nil {
				t.Fatal(err)
			}
			if got := job.Meta["v"]; got != tc.want {
				t.Errorf("var.v = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestUntypedVariableWithAListDefaultReadsStringsAsExpressions(t *testing.T) {
	job, err := ParseWithConfig(&ParseConfig{Path: "v.hcl", Body: []byte(`
variable "dcs" { default = ["a"] }
job "j" { datacenters = var.dcs }`), ArgVars: []string{`dcs=["x", "y"]`}})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, []string{"x", "y"}, job.Datacenters)
}

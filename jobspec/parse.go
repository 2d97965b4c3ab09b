package jobspec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"

	"github.com/drover-sched/drover/api"
)

// ParseConfig is everything a parse may depend on. Keeping the environment
// and file access in here, instead of reading os.Environ or the disk behind
// the caller's back, makes a parse reproducible: the same config gives the
// same job.
type ParseConfig struct {
	// Path names the job file in error messages and is the base directory
	// for file functions. If Body is nil, the file is read from Path.
	Path string

	// Body is the job file's content.
	Body []byte

	// ArgVars are "name=value" pairs from -var flags.
	ArgVars []string

	// VarFiles are paths of variable files (HCL or JSON), applied in order.
	VarFiles []string

	// Envs is the environment in os.Environ form. Only NOMAD_VAR_<name>
	// entries are used, as values for declared variables.
	Envs []string

	// AllowFS enables the functions that read files (file, fileexists).
	AllowFS bool

	// Strict makes a value given for an undeclared variable (in a variable
	// file or a -var flag) an error instead of being ignored.
	Strict bool
}

// Parse parses the job file read from r, strictly and without file access.
// path names the file in error messages.
func Parse(path string, r io.Reader) (*api.Job, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading job file %s: %w", path, err)
	}
	return ParseWithConfig(&ParseConfig{Path: path, Body: body, Strict: true})
}

// ParseWithConfig parses the job file described by c. The job is returned
// without defaults applied; see the package documentation. Errors are of
// type *Error unless the file could not be read at all.
func ParseWithConfig(c *ParseConfig) (*api.Job, error) {
	job, _, err := ParseWithWarnings(c)
	return job, err
}

// ParseWithWarnings is ParseWithConfig that also returns warnings: blocks
// of Nomad's job syntax Drover accepts but ignores, each as
// "file:line,col: text", for the CLI to show.
func ParseWithWarnings(c *ParseConfig) (*api.Job, []string, error) {
	job, diags, err := parse(c)
	return job, warningsFrom(diags), err
}

func parse(c *ParseConfig) (*api.Job, hcl.Diagnostics, error) {
	src := c.Body
	if src == nil && c.Path != "" {
		var err error
		if src, err = os.ReadFile(c.Path); err != nil {
			return nil, nil, fmt.Errorf("reading job file: %w", err)
		}
	}
	filename := c.Path
	if filename == "" {
		filename = "<job>"
	}

	if diags := checkUTF8(src, filename); diags.HasErrors() {
		return nil, diags, errorFrom(diags)
	}
	if err := CheckNesting(src, filename, MaxNestingDepth); err != nil {
		return nil, err.(*Error).Diagnostics, err
	}
	if isJSON(src) {
		if form, ok := apiJSONForm(src); ok {
			job, err := parseAPIJSON(filename, src, form)
			return job, nil, err
		}
	}

	file, diags := parseHCLOrJSON(src, filename)
	if diags.HasErrors() {
		return nil, diags, errorFrom(diags)
	}
	sources := map[string][]byte{filename: src}

	content, diags := file.Body.Content(fileSchema)
	if diags.HasErrors() {
		return nil, diags, errorFrom(diags)
	}

	vars, varDiags := collectVariables(content, c, sources)
	diags = append(diags, varDiags...)
	if diags.HasErrors() {
		return nil, diags, errorFrom(diags)
	}

	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": vars},
		Functions: functions(baseDir(c.Path), c.AllowFS),
	}
	locals, localDiags := evaluateLocals(content, ctx, sources)
	diags = append(diags, localDiags...)
	if diags.HasErrors() {
		return nil, diags, errorFrom(diags)
	}
	ctx.Variables["local"] = locals

	jobBlock, jobDiags := singleJobBlock(content, filename)
	diags = append(diags, jobDiags...)
	if diags.HasErrors() {
		return nil, diags, errorFrom(diags)
	}

	d := &decoder{ctx: ctx, sources: sources, syntax: indexSyntax(file.Body)}
	job := d.job(jobBlock.Labels[0], dynblock.Expand(jobBlock.Body, ctx))
	diags = append(diags, d.diags...)
	if err := errorFrom(diags); err != nil {
		return nil, diags, err
	}
	return job, diags, nil
}

// fileSchema is what may appear at the top level of a job file.
var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "job", LabelNames: []string{"name"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "variables"},
		{Type: "locals"},
	},
}

func singleJobBlock(content *hcl.BodyContent, filename string) (*hcl.Block, hcl.Diagnostics) {
	var found *hcl.Block
	var diags hcl.Diagnostics
	for _, b := range content.Blocks {
		if b.Type != "job" {
			continue
		}
		if found != nil {
			diags = append(diags, newDiag(b.DefRange, "Duplicate job block",
				"A job file holds exactly one job; another job block is at %s.", found.DefRange))
			continue
		}
		found = b
	}
	if found == nil {
		rng := content.MissingItemRange
		if rng.Filename == "" {
			rng.Filename = filename
		}
		diags = append(diags, newDiag(rng, "Missing job block",
			`A job file must contain one job block, such as job "example" { ... }.`))
	}
	return found, diags
}

// parseHCLOrJSON parses src as HCL's JSON syntax if it looks like JSON and
// as native syntax otherwise, going by content rather than by file name
// because job files arrive over stdin and the API too.
func parseHCLOrJSON(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if diags := checkUTF8(src, filename); diags.HasErrors() {
		return nil, diags
	}
	if err := CheckNesting(src, filename, MaxNestingDepth); err != nil {
		return nil, err.(*Error).Diagnostics
	}
	if isJSON(src) {
		return hcljson.Parse(src, filename)
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

// isJSON reports whether the first non-blank character opens a JSON object;
// native HCL cannot start with "{".
func isJSON(src []byte) bool {
	trimmed := bytes.TrimLeft(src, " \t\r\n\ufeff")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

func baseDir(path string) string {
	if path == "" {
		return "."
	}
	return filepath.Dir(path)
}

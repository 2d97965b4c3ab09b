package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"

	"github.com/drover-sched/drover/jobspec"
)

// Error lists every malformed value found while loading agent
// configuration, each as "file:line:col: key: problem", so an operator fixes
// them all in one go.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems in agent configuration:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// loadPaths loads each path in order (a file, or a directory whose
// .hcl and .json files are read in lexical order) and merges them, later
// files winning. Warnings name keys Drover accepts but ignores; the error,
// an *Error when values are malformed, names every problem at once.
func loadPaths(paths []string) (*Config, []string, error) {
	merged := &Config{}
	var warnings, problems []string
	for _, p := range paths {
		files, err := configFiles(p)
		if err != nil {
			return nil, warnings, err
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, warnings, fmt.Errorf("reading agent config: %w", err)
			}
			c, w, err := Parse(f, src)
			warnings = append(warnings, w...)
			if ce, ok := err.(*Error); ok {
				problems = append(problems, ce.Problems...)
				continue
			} else if err != nil {
				return nil, warnings, err
			}
			merged = merged.Merge(c)
		}
	}
	if len(problems) > 0 {
		return nil, warnings, &Error{Problems: problems}
	}
	return merged, warnings, nil
}

// configFiles expands a -config argument: a file is itself, a directory is
// its .hcl and .json files, sorted, as Nomad reads a config directory.
func configFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	var out []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".hcl" && ext != ".json") {
			continue
		}
		out = append(out, filepath.Join(path, e.Name()))
	}
	sort.Strings(out)
	return out, nil
}

// Parse parses one agent configuration file, in HCL native syntax or,
// when filename ends in .json or the content starts with '{', HCL's JSON
// syntax. The result holds only what the file sets (see Merge).
func Parse(filename string, src []byte) (*Config, []string, error) {
	var file *hcl.File
	var diags hcl.Diagnostics
	if err := jobspec.CheckNesting(src, filename, jobspec.MaxNestingDepth); err != nil {
		return nil, nil, &Error{Problems: []string{err.Error()}}
	}
	if strings.HasSuffix(filename, ".json") || bytes.HasPrefix(bytes.TrimSpace(src), []byte("{")) {
		file, diags = hcljson.Parse(src, filename)
	} else {
		file, diags = hclsyntax.ParseConfig(hcl1QuotedKeys(src, filename), filename, hcl.InitialPos)
	}
	d := &decoder{}
	d.addDiags(diags)
	if file == nil || diags.HasErrors() {
		return nil, nil, d.err()
	}
	c := &Config{Files: []string{filename}}
	d.decodeTop(file.Body, c)
	if err := d.err(); err != nil {
		return nil, d.warnings, err
	}
	return c, d.warnings, nil
}

// hcl1QuotedKeys lets HCL2 read the HCL1 map-block form Nomad's docs use,
//
//	options {
//	  "driver.raw_exec.enable" = "1"
//	}
//
// which HCL2 rejects because block arguments cannot be quoted, and
// `meta { a = "1", b = "2" }`, which HCL2 rejects because a one-line block
// holds one argument. A block whose first item is a quoted key can only be
// meant as a map, and meta and options are always maps, so such a block is
// rewritten to the equivalent object attribute, `options ={ ... }`, by
// replacing the space before the brace with '=' (or inserting one), which
// keeps every other position in the file, and so every error position,
// unchanged.
func hcl1QuotedKeys(src []byte, filename string) []byte {
	toks, diags := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return src
	}
	var inserts []int
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].Type != hclsyntax.TokenIdent || toks[i+1].Type != hclsyntax.TokenOBrace {
			continue
		}
		if mapBlocks[string(toks[i].Bytes)] {
			inserts = append(inserts, toks[i+1].Range.Start.Byte)
			continue
		}
		j := i + 2
		for j < len(toks) && toks[j].Type == hclsyntax.TokenNewline {
			j++
		}
		if j >= len(toks) || toks[j].Type != hclsyntax.TokenOQuote {
			continue
		}
		for j < len(toks) && toks[j].Type != hclsyntax.TokenCQuote {
			j++
		}
		if j+1 < len(toks) && (toks[j+1].Type == hclsyntax.TokenEqual || toks[j+1].Type == hclsyntax.TokenColon) {
			inserts = append(inserts, toks[i+1].Range.Start.Byte)
		}
	}
	if len(inserts) == 0 {
		return src
	}
	out := make([]byte, 0, len(src)+len(inserts))
	prev := 0
	for _, at := range inserts {
		if at > 0 && (src[at-1] == ' ' || src[at-1] == '\t') {
			out = append(out, src[prev:at-1]...)
			out = append(out, '=')
		} else {
			out = append(out, src[prev:at]...)
			out = append(out, '=')
		}
		prev = at
	}
	return append(out, src[prev:]...)
}

// mapBlocks are the agent keys whose blocks are string maps.
var mapBlocks = map[string]bool{"meta": true, "options": true}

// decoder walks a configuration body, collecting warnings (keys Drover
// ignores) and problems (malformed values) with their positions.
type decoder struct {
	warnings []string
	problems []string
}

func (d *decoder) err() error {
	if len(d.problems) == 0 {
		return nil
	}
	return &Error{Problems: d.problems}
}

func (d *decoder) addDiags(diags hcl.Diagnostics) {
	for _, diag := range diags {
		msg := diag.Summary
		if diag.Detail != "" {
			msg += "; " + diag.Detail
		}
		if diag.Subject != nil {
			msg = posOf(*diag.Subject) + ": " + msg
		}
		if diag.Severity == hcl.DiagWarning {
			d.warnings = append(d.warnings, msg)
		} else {
			d.problems = append(d.problems, msg)
		}
	}
}

func (d *decoder) problem(rng hcl.Range, key, format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf("%s: %s: %s", posOf(rng), key, fmt.Sprintf(format, args...)))
}

func (d *decoder) warn(rng hcl.Range, format string, args ...any) {
	d.warnings = append(d.warnings, fmt.Sprintf("%s:%d: %s", rng.Filename, rng.Start.Line, fmt.Sprintf(format, args...)))
}

func posOf(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/jobspec"
)

// A job file is a program: for expressions, template interpolation,
// locals that refer to locals, number literals with large exponents. A
// hundred bytes of it can make the evaluator allocate gigabytes or compute
// for minutes, and no check on the source can tell all such files apart
// from real ones. So the agent never evaluates a job file it receives
// (/v1/jobs/parse) in its own process: it runs its own executable as a
// child (see helper/childproc), which parses one file with a heap limit
// and a deadline, and a file that needs more is refused with a 400 saying
// which limit stopped it. The CLI parses the user's own files in its own
// process, as before.

// parseChildEntry is the child entry point that parses one job file.
const parseChildEntry = "job-parse"

// Defaults for the child: real job files need a few MiB and milliseconds.
const (
	defaultParseTimeout  = 10 * time.Second
	defaultParseMemLimit = 256 << 20
	// parseSlots bounds how many children run at once; more requests wait.
	parseSlots = 2
	// maxParseOutput bounds what the agent reads back from a child.
	maxParseOutput = 64 << 20
)

func init() { childproc.Register(parseChildEntry, runParseChild) }

// parseChildRequest is what the agent sends the child on its stdin; the
// child answers with the job as JSON.
type parseChildRequest struct {
	JobHCL    string
	Variables string
}

// runParseChild is the child's side: it parses the one job file in input.
func runParseChild(input []byte, _ func(string)) ([]byte, error) {
	var req parseChildRequest
	if err := json.Unmarshal(input, &req); err != nil {
		return nil, fmt.Errorf("reading the parse request: %w", err)
	}
	job, err := parseJobFile(req.JobHCL, req.Variables)
	if err != nil {
		return nil, err
	}
	return json.Marshal(job)
}

// parseJobFile parses a job file the way /v1/jobs/parse always has: no
// file access, no environment, variables from the request.
func parseJobFile(hcl, variables string) (*api.Job, error) {
	cfg := &jobspec.ParseConfig{Path: "input.hcl", Body: []byte(hcl)}
	if variables != "" {
		// The parser reads variable files by path; the request carries the
		// content, so it goes through a private temporary file.
		dir, err := os.MkdirTemp("", "drover-parse-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		name := "variables.hcl"
		if strings.HasPrefix(strings.TrimSpace(variables), "{") {
			name = "variables.json"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(variables), 0o600); err != nil {
			return nil, err
		}
		cfg.VarFiles = []string{path}
	}
	return jobspec.ParseWithConfig(cfg)
}

// jobParser runs parse children for the HTTP API.
type jobParser struct {
	runner *childproc.Runner
}

// newJobParser returns a parser whose children run under the given
// limits. Nothing of the agent's environment (tokens, paths) reaches a
// child; the parser needs none, as the variables come in the request.
func newJobParser(timeout time.Duration, memLimit uint64) *jobParser {
	return &jobParser{runner: childproc.New(childproc.Config{
		Entry:       parseChildEntry,
		Limits:      childproc.Limits{Heap: memLimit, Wall: timeout, Output: maxParseOutput},
		Concurrency: parseSlots,
	})}
}

var (
	defaultParserOnce sync.Once
	defaultParser     *jobParser
)

// jobParser returns the API's parser: its own if a test set one.
func (s *httpAPI) jobParser() *jobParser {
	if s.parser != nil {
		return s.parser
	}
	defaultParserOnce.Do(func() { defaultParser = newJobParser(defaultParseTimeout, defaultParseMemLimit) })
	return defaultParser
}

// parse evaluates a job file in a child process. An error a caller caused
// (a bad file, a file over a limit) is a bad request; one the agent caused
// (no child could run) is not.
func (p *jobParser) parse(ctx context.Context, hcl, variables string) (*api.Job, error) {
	in, err := json.Marshal(parseChildRequest{JobHCL: hcl, Variables: variables})
	if err != nil {
		return nil, err
	}
	out, err := p.runner.Run(ctx, in)
	var (
		limitErr *childproc.LimitError
		childErr *childproc.ChildError
	)
	switch {
	case errors.As(err, &limitErr):
		return nil, parseLimitError(limitErr)
	case errors.As(err, &childErr):
		return nil, badRequest("%s", childErr.Msg)
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("parsing the job file: %w", err)
	}
	var job api.Job
	if err := json.Unmarshal(out, &job); err != nil {
		return nil, fmt.Errorf("parsing the job file: the parser's answer is no job: %w", err)
	}
	return &job, nil
}

// parseLimitError says, as /v1/jobs/parse always has, which limit stopped
// the evaluation of a job file and what kind of file does that.
func parseLimitError(e *childproc.LimitError) error {
	switch e.Limit {
	case childproc.LimitHeap:
		return badRequest("evaluating the job file needed more than %d MiB and was stopped; a job file that builds large values "+
			"(nested for expressions, long ranges, locals built from locals, huge numbers) cannot be parsed by the agent", e.Limits.Heap>>20)
	case childproc.LimitWall:
		return badRequest("evaluating the job file took longer than %s and was stopped; a job file that computes a lot "+
			"(nested for expressions, long ranges, huge numbers) cannot be parsed by the agent", e.Limits.Wall)
	default:
		return badRequest("the parsed job is larger than %d MiB", e.Limits.Output>>20)
	}
}

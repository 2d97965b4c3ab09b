package command

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/jobspec"
)

// stringList is a repeatable string flag (-var a=1 -var b=2).
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// jobFileFlags are the flags of every verb that reads a job file.
type jobFileFlags struct {
	vars     stringList
	varFiles stringList
}

func (f *jobFileFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.vars, "var", "")
	fs.Var(&f.varFiles, "var-file", "")
}

const jobFileFlagsHelp = `
  -var 'key=value'
    A value for an input variable of the job file. May be repeated.

  -var-file=path
    A file of input variable values, in HCL or JSON. May be repeated; later
    files win. NOMAD_VAR_<name> environment variables are read as well,
    with the lowest precedence.
`

// parseJobFile parses a job file locally, as Nomad's CLI does, so syntax
// and variable errors are reported with file positions before anything is
// sent. Path "-" reads standard input.
func (m *Meta) parseJobFile(path string, f *jobFileFlags) (*api.Job, error) {
	cfg := &jobspec.ParseConfig{
		Path:     path,
		ArgVars:  f.vars,
		VarFiles: f.varFiles,
		Envs:     m.environ(),
		AllowFS:  true,
		Strict:   true,
	}
	if path == "-" {
		body, err := io.ReadAll(m.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading job from standard input: %w", err)
		}
		cfg.Path, cfg.Body = "<stdin>", body
	} else if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("reading job file: %w", err)
	}
	job, warnings, err := jobspec.ParseWithWarnings(cfg)
	if err != nil {
		return nil, err
	}
	if len(warnings) > 0 {
		fmt.Fprintf(m.stderr, "Job Warnings:\n%s\n\n", strings.Join(warnings, "\n"))
	}
	return job, nil
}

// useJobNamespace makes the client the verb builds next use the job's
// namespace, if the job file names one (it wins over -namespace, as the
// servers use it too), so that the evaluation and allocations the
// submission creates are read back from the namespace they live in.
func (m *Meta) useJobNamespace(job *api.Job) {
	if ns := deref(job.Namespace); ns != "" {
		m.namespace = ns
	}
}

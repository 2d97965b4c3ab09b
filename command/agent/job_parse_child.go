package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/jobspec"
)

// A job file is a program: for expressions, template interpolation,
// locals that refer to locals, number literals with large exponents. A
// hundred bytes of it can make the evaluator allocate gigabytes or compute
// for minutes, and no check on the source can tell all such files apart
// from real ones. So the agent never evaluates a job file it receives
// (/v1/jobs/parse) in its own process: it runs its own executable as a
// child, which parses one file with a heap limit and a deadline, and a
// file that needs more is refused with a 400 saying which limit stopped
// it. The CLI parses the user's own files in its own process, as before.

// parseChildEnv, set in a child's environment to the child's heap limit in
// bytes, makes the executable parse one job file instead of being Drover.
const parseChildEnv = "DROVER_JOB_PARSE_CHILD"

// Defaults for the child: real job files need a few MiB and milliseconds.
const (
	defaultParseTimeout  = 10 * time.Second
	defaultParseMemLimit = 256 << 20
	// parseSlots bounds how many children run at once; more requests wait.
	parseSlots = 2
	// maxParseOutput bounds what the agent reads back from a child.
	maxParseOutput = 64 << 20
)

// parseChildRequest and parseChildResponse are what the agent and the
// child exchange on the child's stdin and stdout.
type parseChildRequest struct {
	JobHCL    string
	Variables string
}

type parseChildResponse struct {
	Job   *api.Job
	Error string
}

// MaybeRunParseChild runs the job parse child and returns its exit code
// if this process was started as one (see parseChildEnv). Drover's main
// and the agent package's tests call it before anything else.
func MaybeRunParseChild() (int, bool) {
	v, ok := os.LookupEnv(parseChildEnv)
	if !ok {
		return 0, false
	}
	limit, err := strconv.ParseUint(v, 10, 64)
	if err != nil || limit == 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a heap limit in bytes\n", parseChildEnv, v)
		return 2, true
	}
	return runParseChild(os.Stdin, os.Stdout, limit), true
}

// runParseChild parses the one job file on in and writes the result to
// out. A watchdog ends the process with an answer if the heap grows past
// limit; the agent's deadline ends it otherwise.
func runParseChild(in io.Reader, out io.Writer, limit uint64) int {
	debug.SetMemoryLimit(int64(limit / 2))
	var outMu sync.Mutex
	answer := func(resp parseChildResponse) {
		outMu.Lock() // held until exit: one answer only
		_ = json.NewEncoder(out).Encode(resp)
	}
	go watchHeap(limit, func() {
		answer(parseChildResponse{Error: fmt.Sprintf(
			"evaluating the job file needed more than %d MiB and was stopped; a job file that builds large values "+
				"(nested for expressions, long ranges, locals built from locals, huge numbers) cannot be parsed by the agent", limit>>20)})
		os.Exit(3)
	})

	var req parseChildRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		answer(parseChildResponse{Error: "reading the parse request: " + err.Error()})
		return 2
	}
	job, err := parseJobFile(req.JobHCL, req.Variables)
	if err != nil {
		answer(parseChildResponse{Error: err.Error()})
		return 0
	}
	answer(parseChildResponse{Job: job})
	return 0
}

// watchHeap calls over once the heap passes limit. It samples every few
// milliseconds; at the rates an evaluator allocates, the heap overshoots
// the limit by tens of MiB at most before it is stopped.
func watchHeap(limit uint64, over func()) {
	var m runtime.MemStats
	for {
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > limit {
			over()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	// exe is the executable to run; empty means this process's own.
	exe      string
	timeout  time.Duration
	memLimit uint64
	slots    chan struct{}
}

func newJobParser() *jobParser {
	return &jobParser{timeout: defaultParseTimeout, memLimit: defaultParseMemLimit, slots: make(chan struct{}, parseSlots)}
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
	defaultParserOnce.Do(func() { defaultParser = newJobParser() })
	return defaultParser
}

// parse evaluates a job file in a child process. An error a caller caused
// (a bad file, a file over a limit) is a bad request; one the agent caused
// (no child could run) is not.
func (p *jobParser) parse(ctx context.Context, hcl, variables string) (*api.Job, error) {
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	exe, err := p.executable()
	if err != nil {
		return nil, fmt.Errorf("parsing the job file: finding the agent's executable to run the parser: %w", err)
	}
	in, err := json.Marshal(parseChildRequest{JobHCL: hcl, Variables: variables})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, exe)
	// Nothing of the agent's environment (tokens, paths) reaches the
	// child, and it uses one core.
	cmd.Env = []string{parseChildEnv + "=" + strconv.FormatUint(p.memLimit, 10), "GOMAXPROCS=1"}
	cmd.Stdin = bytes.NewReader(in)
	stdout := &cappedBuffer{max: maxParseOutput}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, badRequest("evaluating the job file took longer than %s and was stopped; a job file that computes a lot "+
			"(nested for expressions, long ranges, huge numbers) cannot be parsed by the agent", p.timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case stdout.overflow:
		return nil, badRequest("the parsed job is larger than %d MiB", maxParseOutput>>20)
	}
	var resp parseChildResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("parsing the job file: the parser exited (%v) without an answer: %s", runErr, strings.TrimSpace(stderr.String()))
	}
	if resp.Error != "" {
		return nil, badRequest("%s", resp.Error)
	}
	if resp.Job == nil {
		return nil, fmt.Errorf("parsing the job file: the parser answered neither a job nor an error")
	}
	return resp.Job, nil
}

// executable is what to run as the child: this very binary. On Linux that
// is /proc/self/exe, which still works after the file on disk has been
// replaced by an upgrade, so agent and child always agree.
func (p *jobParser) executable() (string, error) {
	if p.exe != "" {
		return p.exe, nil
	}
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			return "/proc/self/exe", nil
		}
	}
	return os.Executable()
}

// cappedBuffer keeps at most max bytes and notes that more were written.
type cappedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.max - b.Len(); n > room {
		b.overflow = true
		p = p[:max(room, 0)]
	}
	b.Buffer.Write(p)
	return n, nil
}

package httpapi

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
)

// The finding: a job file is a program. HCL's for expressions, template
// interpolation, locals and number literals let a request of a hundred
// bytes make the evaluator allocate gigabytes or compute for minutes, and
// /v1/jobs/parse evaluated it inside the agent: one request could take
// the agent down. Each of these is answered with a 400 that says what
// stopped it, and the agent itself allocates next to nothing for it.
//
// Which limit stops a bomb first (the heap or the deadline) depends on
// the machine, so the test accepts either. The bombs are sized to stop at
// the test's 16 MiB child limit while
// costing a few hundred MiB at most should the evaluation ever move back
// into the agent, so that a regression fails this test rather than the
// machine running it.
func TestJobsParseEvaluatesUntrustedFilesOutsideTheAgent(t *testing.T) {
	s := &httpAPI{
		rpc: fakeRPC{}, logger: hclog.NewNullLogger(), forward: &http.Client{},
		info:   func() AgentInfo { return AgentInfo{Config: config.Dev()} },
		parser: newJobParser(5*time.Second, 16<<20),
	}
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, hcl, want string
	}{
		{"nested for expressions", `job "j" {
  meta = { x = jsonencode([for a in range(600): [for b in range(600): a]]) }
}`, "was stopped"},
		{"locals that double", doublingLocals(24), "was stopped"},
		{"a number with a huge exponent", `job "j" {
  meta = { x = 1e10000000 }
}`, "was stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := totalAllocBytes()
			start := time.Now()
			resp, body := call(t, http.MethodPost, srv.URL+"/v1/jobs/parse", api.JobsParseRequest{JobHCL: tc.hcl})
			requireStatus(t, resp, body, 400, tc.want)
			if grew := totalAllocBytes() - before; grew > 64<<20 {
				t.Errorf("the agent allocated %d MiB to refuse it", grew>>20)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("refusing it took %v", took)
			}
		})
	}

	// Real job files still parse in a child, variables included: see
	// TestJobsParse and the Nomad job files in compat_nomad_jobfiles_test.go.
}

// doublingLocals is a job file whose locals each double the one before:
// n locals, a string of 16<<n bytes.
func doublingLocals(n int) string {
	src := "locals {\n  l0 = \"xxxxxxxxxxxxxxxx\"\n"
	for i := 1; i <= n; i++ {
		src += "  l" + itoa(i) + " = \"${local.l" + itoa(i-1) + "}${local.l" + itoa(i-1) + "}\"\n"
	}
	return src + "}\njob \"j\" {\n  meta = { x = local.l" + itoa(n) + " }\n}\n"
}

func itoa(i int) string { return strconv.Itoa(i) }

func totalAllocBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

package httpapi

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/jobspec"
)

// TestExampleJobsValidate: every job file shipped in examples/ parses and
// passes the validation a registration runs (driver config schemas, log
// storage, template perms, task names included), so no example teaches a
// job the server refuses.
func TestExampleJobsValidate(t *testing.T) {
	paths, err := filepath.Glob("../../../examples/*.hcl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(src, []byte("\njob \"")) && !bytes.HasPrefix(src, []byte("job \"")) {
				t.Skip("not a job file (an ACL policy)")
			}
			aj, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: path, Body: src})
			if err != nil {
				t.Fatal(err)
			}
			aj.Canonicalize()
			job := ApiJobToStructJob(aj)
			job.Canonicalize()
			if err := job.Validate(); err != nil {
				t.Fatalf("%s does not validate: %v", path, err)
			}
		})
	}
}

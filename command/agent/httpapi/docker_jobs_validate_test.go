package httpapi

import (
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/jobspec"
)

// TestDockerJobFilesValidate: every job file of the repository's test data
// that runs a docker task passes the validation a registration runs,
// docker config schema included, so the schema does not refuse a key
// Nomad job files use.
func TestDockerJobFilesValidate(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../../jobspec/testdata/*.hcl", "../testdata/nomad-jobs/*.hcl", "../../../examples/*.hcl"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	var docker int
	for _, path := range paths {
		aj, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: path})
		if err != nil {
			continue // not a job file, or one that tests a parse error
		}
		var uses bool
		for _, tg := range aj.TaskGroups {
			for _, task := range tg.Tasks {
				uses = uses || task.Driver == "docker"
			}
		}
		if !uses {
			continue
		}
		docker++
		t.Run(filepath.Base(path), func(t *testing.T) {
			aj.Canonicalize()
			job := ApiJobToStructJob(aj)
			job.Canonicalize()
			if err := job.Validate(); err != nil {
				t.Fatalf("%s does not validate: %v", path, err)
			}
		})
	}
	if docker < 3 {
		t.Fatalf("found %d job files with a docker task, want at least 3 (jobspec/testdata/redis.hcl, testdata/nomad-jobs/redis.nomad.hcl, examples/docker.hcl)", docker)
	}
}

package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
)

// artifactJobHCL is a Nomad job file whose task downloads its program: a
// tarball unpacked into local/ and a config file in file mode.
const artifactJobHCL = `
job "fetcher" {
  type = "batch"
  group "g" {
    task "app" {
      driver = "raw_exec"
      config {
        command = "local/bin/app.sh"
      }
      meta {
        release = "v2"
      }
      artifact {
        source      = "SERVER/${NOMAD_META_release}/app.tar.gz"
        destination = "local/"
        headers {
          X-Release = "${NOMAD_META_release}"
        }
      }
      artifact {
        source      = "SERVER/conf/app.ini"
        mode        = "file"
        destination = "local/etc/app.ini"
        options {
          checksum = "md5:CONFSUM"
        }
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// TestNomadClientRunsATaskWithArtifacts registers, with Nomad's client, a
// job file whose task downloads its script from a web server; the task
// runs it, the files are readable through AllocFS, and the task events
// are Nomad's.
func TestNomadClientRunsATaskWithArtifacts(t *testing.T) {
	t.Parallel()
	script := "#!/bin/sh\necho \"app $(cat local/etc/app.ini)\"\n"
	conf := "mode=fetched"
	var releaseHeader atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v2/app.tar.gz":
			releaseHeader.Store(r.Header.Get("X-Release"))
			_, _ = w.Write(gzTar(t, "bin/app.sh", script, 0o755))
		case "/conf/app.ini":
			_, _ = io.WriteString(w, conf)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	a := NewTestAgent(t, allowLoopbackArtifacts)
	c := nomadClient(t, a)
	sum := md5.Sum([]byte(conf))
	src := strings.NewReplacer("SERVER", srv.URL, "CONFSUM", hex.EncodeToString(sum[:])).Replace(artifactJobHCL)
	job, err := c.Jobs().ParseHCL(src, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	allocs := nomadJobAllocs(t, c, "fetcher", 1, "the alloc to complete", clientStatus("complete"))
	alloc := allocs[0]

	if got := nomadLogs(t, c, alloc, "app", "stdout"); got != "app mode=fetched\n" {
		t.Fatalf("stdout %q: the downloaded script did not run", got)
	}
	if got, _ := releaseHeader.Load().(string); got != "v2" {
		t.Fatalf("X-Release header %q, want the interpolated v2", got)
	}
	rc, err := c.AllocFS().Cat(alloc, "app/local/bin/app.sh", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if string(body) != script {
		t.Fatalf("AllocFS().Cat app/local/bin/app.sh = %q", body)
	}
	var types []string
	for _, e := range alloc.TaskStates["app"].Events {
		types = append(types, e.Type)
	}
	if !strings.Contains(strings.Join(types, ","), nomadapi.TaskDownloadingArtifacts+","+nomadapi.TaskStarted) {
		t.Fatalf("events %v: want %q before %q", types, nomadapi.TaskDownloadingArtifacts, nomadapi.TaskStarted)
	}
}

// TestNomadClientSeesArtifactFailures: a checksum mismatch fails the task
// at once with Nomad's "Failed Artifact Download" event, and a malformed
// artifact is refused at registration, naming group, task and artifact.
func TestNomadClientSeesArtifactFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "not what was promised")
	}))
	defer srv.Close()
	a := NewTestAgent(t, allowLoopbackArtifacts)
	c := nomadClient(t, a)

	src := strings.NewReplacer("SERVER", srv.URL, "CONFSUM", strings.Repeat("0", 32)).Replace(artifactJobHCL)
	job, err := c.Jobs().ParseHCL(src, true)
	if err != nil {
		t.Fatal(err)
	}
	job.TaskGroups[0].Tasks[0].Artifacts = job.TaskGroups[0].Tasks[0].Artifacts[1:] // only the checksummed one
	job.TaskGroups[0].RestartPolicy.Attempts = new(3)
	job.TaskGroups[0].ReschedulePolicy.Attempts = new(0)
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	alloc := nomadJobAllocs(t, c, "fetcher", 1, "the alloc to fail", clientStatus("failed"))[0]
	st := alloc.TaskStates["app"]
	var failed *nomadapi.TaskEvent
	for _, e := range st.Events {
		if e.Type == nomadapi.TaskArtifactDownloadFailed {
			failed = e
		}
	}
	if failed == nil || !strings.Contains(failed.DownloadError, "checksum mismatch") || st.Restarts != 0 {
		t.Fatalf("want one failed download with a checksum mismatch and no restart, got restarts=%d events %+v", st.Restarts, st.Events)
	}

	bad, err := c.Jobs().ParseHCL(strings.NewReplacer("SERVER", srv.URL, "CONFSUM", "xyz").Replace(artifactJobHCL), true)
	if err != nil {
		t.Fatal(err)
	}
	bad.ID = new("bad-artifact")
	_, _, err = c.Jobs().Register(bad, nil)
	if err == nil || !strings.Contains(err.Error(), `group "g" task "app" artifact[1]: options.checksum "md5:xyz"`) {
		t.Fatalf("register: %v", err)
	}
	if _, _, err := c.Jobs().Info("bad-artifact", nil); err == nil {
		t.Fatal("the refused job was stored")
	}
}

func gzTar(t *testing.T, name, body string, mode int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, body); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allowLoopbackArtifacts lets a test agent fetch artifacts from the test's
// web servers, which listen on loopback.
func allowLoopbackArtifacts(c *config.Config) { c.Client.Artifact.AllowedHosts = []string{"127.0.0.1"} }

package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestArtifactBlockParsesMergesAndReachesTheClient(t *testing.T) {
	c, warnings, err := Parse("agent.hcl", []byte(`
client {
  enabled = true
  artifact {
    http_read_timeout                = "10m"
    http_max_size                    = "200MiB"
    decompression_size_limit         = "1GiB"
    decompression_file_count_limit   = 100
    disable_filesystem_isolation     = false
    filesystem_isolation_extra_paths = ["d:r:/srv/shared", "f:r:/etc/app.conf", "d:w:/tmp/scratch"]
    set_environment_variables        = "SSL_CERT_FILE,https_proxy"
    allowed_local_paths              = ["/opt/artifacts"]
    allowed_hosts                    = ["127.0.0.1:8080", "10.0.0.0/8", "repo.internal"]
    deny_private_networks            = true
    git_timeout                      = "5m"
  }
}
`))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "git_timeout") || !strings.Contains(warnings[0], "no git getter") {
		t.Fatalf("warnings %v, want one for git_timeout", warnings)
	}
	full := Default().Merge(c)
	f := full.ForClient("/data", []string{"127.0.0.1:4647"}, "127.0.0.1:4646", nil).Artifacts
	if f.Timeout != 10*time.Minute || f.MaxDownloadBytes != 200<<20 || f.MaxUnpackedBytes != 1<<30 || f.MaxArchiveFiles != 100 {
		t.Fatalf("bounds: %+v", f)
	}
	s := f.Sources
	if s.AnyLocalPath || !s.DenyPrivate || !s.UseProxy ||
		!slices.Equal(s.LocalPaths, []string{"/opt/artifacts", "/srv/shared"}) || !slices.Equal(s.LocalFiles, []string{"/etc/app.conf"}) {
		t.Fatalf("sources: %+v", s)
	}
	var rules []string
	for _, r := range s.AllowedHosts {
		rules = append(rules, r.String())
	}
	if !slices.Equal(rules, []string{"127.0.0.1:8080", "10.0.0.0/8", "repo.internal"}) {
		t.Fatalf("allowed hosts %v", rules)
	}

	// A later file sets one key; the others keep their values, and
	// copies do not alias.
	later, _, err := Parse("later.hcl", []byte("client {\n  artifact {\n    disable_filesystem_isolation = true\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	merged := full.Merge(later)
	if !merged.Client.Artifact.DisableFilesystemIsolation || merged.Client.Artifact.HTTPMaxSize != 200<<20 || len(merged.Client.Artifact.AllowedHosts) != 3 {
		t.Fatalf("merged: %+v", merged.Client.Artifact)
	}
	cp := merged.Copy()
	cp.Client.Artifact.AllowedHosts[0] = "changed"
	if merged.Client.Artifact.AllowedHosts[0] == "changed" {
		t.Fatal("Copy shares allowed_hosts")
	}
}

func TestArtifactBlockDefaultsAreSafe(t *testing.T) {
	f := Default().ForClient("/data", nil, "127.0.0.1:4646", nil).Artifacts
	s := f.Sources
	if s.AnyLocalPath || s.DenyPrivate || s.UseProxy || len(s.LocalPaths)+len(s.LocalFiles)+len(s.AllowedHosts) != 0 {
		t.Fatalf("default sources %+v", s)
	}
	if f.MaxDownloadBytes != 0 || f.Timeout != 0 {
		t.Fatalf("the fetcher's own defaults should apply: %+v", f)
	}
}

func TestBadArtifactValuesNameTheKey(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`allowed_hosts = ["http://repo"]`, `client.artifact.allowed_hosts`},
		{`allowed_hosts = ["repo:0"]`, `port must be a number`},
		{`allowed_local_paths = ["relative/dir"]`, `not an absolute path`},
		{`allowed_local_paths = ["/"]`, `disable_filesystem_isolation`},
		{`filesystem_isolation_extra_paths = ["/opt"]`, `kind:mode:path`},
		{`http_max_size = "0"`, `client.artifact.http_max_size`},
		{`http_read_timeout = "0s"`, `0 would switch the timeout off`},
		{`decompression_file_count_limit = 0`, `0 would switch the limit off`},
		{`deny_private_networks = "maybe"`, `expected true or false`},
	} {
		_, _, err := Parse("agent.hcl", []byte("client {\n  artifact {\n    "+tc.body+"\n  }\n}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.body, err, tc.want)
		}
	}
	// A configuration built in code is checked too.
	c := Default()
	c.DevMode = true
	c.Client.Enabled, c.Server.Enabled = true, true
	c.Client.Artifact.AllowedHosts = []string{"not a host"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "client.artifact.allowed_hosts") {
		t.Fatalf("Validate: %v", err)
	}
}

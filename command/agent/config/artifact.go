package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/client/artifact"
)

// ArtifactConfig is the client's artifact {} block: Nomad's keys, with
// Nomad's meaning where Drover has it, and Drover's own for where
// artifacts may come from. Zero fields are "not set" while files are
// merged; fetcher fills the defaults.
type ArtifactConfig struct {
	// HTTPReadTimeout bounds one artifact's fetch (http_read_timeout).
	HTTPReadTimeout time.Duration
	// HTTPMaxSize bounds one download, or one local copy (http_max_size).
	HTTPMaxSize int64
	// DecompressionSizeLimit and DecompressionFileCountLimit bound what
	// one archive unpacks to.
	DecompressionSizeLimit      int64
	DecompressionFileCountLimit int
	// DisableFilesystemIsolation lets local sources read any path the
	// agent can, as it lets Nomad's getter out of its sandbox.
	DisableFilesystemIsolation bool
	// FilesystemIsolationExtraPaths are Nomad's "kind:mode:path" grants;
	// those with read permission ("d:r:/opt/artifacts", "f:r:/etc/x")
	// are directories or files local sources may read.
	FilesystemIsolationExtraPaths []string
	// SetEnvironmentVariables names variables Nomad passes to its getter.
	// Drover fetches in its own process, where only the proxy variables
	// change a download: naming HTTP_PROXY or HTTPS_PROXY makes downloads
	// use the proxy the agent's environment sets.
	SetEnvironmentVariables string

	// AllowedLocalPaths are directories local sources may read besides
	// the allocation's own (Drover's).
	AllowedLocalPaths []string
	// AllowedHosts are addresses, networks and host names http(s)
	// sources may use even when loopback, link-local, private (with
	// DenyPrivateNetworks) or this machine's (Drover's); see
	// artifact.ParseHostRule.
	AllowedHosts []string
	// DenyPrivateNetworks refuses private-network addresses too
	// (Drover's).
	DenyPrivateNetworks bool
}

// Bounds of the artifact block's values.
const (
	minArtifactSize = 1 << 10
	maxArtifactSize = 1 << 40
	maxArtifactFile = 1 << 24
)

// ignoredArtifact are Nomad's keys for getters Drover does not have.
var ignoredArtifact = map[string]string{
	"gcs_timeout":                 "Drover has no GCS getter",
	"git_timeout":                 "Drover has no git getter",
	"hg_timeout":                  "Drover has no hg getter",
	"s3_timeout":                  "Drover has no S3 getter",
	"disable_artifact_inspection": "Drover always inspects what it fetches",
}

func (d *decoder) decodeArtifact(body hcl.Body, c *ArtifactConfig) {
	d.walk(body, &section{
		path: "client.artifact",
		attrs: map[string]attrFunc{
			"http_read_timeout":                positiveDurAttr(&c.HTTPReadTimeout),
			"http_max_size":                    sizeAttr(&c.HTTPMaxSize, minArtifactSize, maxArtifactSize),
			"decompression_size_limit":         sizeAttr(&c.DecompressionSizeLimit, minArtifactSize, maxArtifactSize),
			"decompression_file_count_limit":   limitIntAttr(&c.DecompressionFileCountLimit, maxArtifactFile),
			"disable_filesystem_isolation":     boolAttr(&c.DisableFilesystemIsolation),
			"filesystem_isolation_extra_paths": checkedListAttr(&c.FilesystemIsolationExtraPaths, checkIsolationPath),
			"set_environment_variables":        strAttr(&c.SetEnvironmentVariables),
			"allowed_local_paths":              checkedListAttr(&c.AllowedLocalPaths, checkLocalPath),
			"allowed_hosts":                    checkedListAttr(&c.AllowedHosts, checkHostRule),
			"deny_private_networks":            boolAttr(&c.DenyPrivateNetworks),
		},
		ignored: ignoredArtifact,
	})
}

// positiveDurAttr is a duration above zero.
func positiveDurAttr(dst *time.Duration) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var dur time.Duration
		durAttr(&dur)(d, key, a)
		if dur == 0 {
			if v, ok := d.value(a.Expr); ok && v.IsKnown() && !v.IsNull() {
				if s, err := toString(v); err == nil && strings.TrimSpace(s) != "" {
					if parsed, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && parsed == 0 {
						d.problem(a.Expr.Range(), key, "0 would switch the timeout off, which Drover does not allow; set a duration such as \"30m\"")
					}
				}
			}
			return
		}
		*dst = dur
	}
}

// checkedListAttr is a list of strings each of which check accepts.
func checkedListAttr(dst *[]string, check func(string) error) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var list []string
		listAttr(&list)(d, key, a)
		for _, s := range list {
			if err := check(s); err != nil {
				d.problem(a.Expr.Range(), key, "%v", err)
				return
			}
		}
		if list != nil {
			*dst = list
		}
	}
}

func checkLocalPath(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%q is not an absolute path; name directories such as \"/opt/artifacts\"", p)
	}
	if filepath.Clean(p) == "/" {
		return fmt.Errorf("%q would allow every path; say so with disable_filesystem_isolation = true", p)
	}
	return nil
}

func checkHostRule(s string) error {
	_, err := artifact.ParseHostRule(s)
	return err
}

// isolationPath splits Nomad's "kind:mode:path" grant.
func isolationPath(s string) (kind, mode, path string, err error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || (parts[0] != "f" && parts[0] != "d") || strings.Trim(parts[1], "rwcx") != "" || !filepath.IsAbs(parts[2]) {
		return "", "", "", fmt.Errorf("%q is not a grant of the form kind:mode:path, where kind is f (a file) or d (a directory), mode is some of r, w, c, x, and path is absolute (for example \"d:r:/opt/artifacts\")", s)
	}
	return parts[0], parts[1], parts[2], nil
}

func checkIsolationPath(s string) error {
	_, _, _, err := isolationPath(s)
	return err
}

func (a ArtifactConfig) merge(o *ArtifactConfig) ArtifactConfig {
	setDur(&a.HTTPReadTimeout, o.HTTPReadTimeout)
	setDur(&a.HTTPMaxSize, o.HTTPMaxSize)
	setDur(&a.DecompressionSizeLimit, o.DecompressionSizeLimit)
	setInt(&a.DecompressionFileCountLimit, o.DecompressionFileCountLimit)
	a.DisableFilesystemIsolation = a.DisableFilesystemIsolation || o.DisableFilesystemIsolation
	setList(&a.FilesystemIsolationExtraPaths, o.FilesystemIsolationExtraPaths)
	setStr(&a.SetEnvironmentVariables, o.SetEnvironmentVariables)
	setList(&a.AllowedLocalPaths, o.AllowedLocalPaths)
	setList(&a.AllowedHosts, o.AllowedHosts)
	a.DenyPrivateNetworks = a.DenyPrivateNetworks || o.DenyPrivateNetworks
	return a
}

func (a ArtifactConfig) copy() ArtifactConfig {
	a.FilesystemIsolationExtraPaths = append([]string(nil), a.FilesystemIsolationExtraPaths...)
	a.AllowedLocalPaths = append([]string(nil), a.AllowedLocalPaths...)
	a.AllowedHosts = append([]string(nil), a.AllowedHosts...)
	return a
}

// validate checks what a configuration built in code may have skipped
// the decoder for.
func (a ArtifactConfig) validate() []error {
	var errs []error
	for _, p := range a.AllowedLocalPaths {
		if err := checkLocalPath(p); err != nil {
			errs = append(errs, fmt.Errorf("agent: client.artifact.allowed_local_paths: %v", err))
		}
	}
	for _, h := range a.AllowedHosts {
		if err := checkHostRule(h); err != nil {
			errs = append(errs, fmt.Errorf("agent: client.artifact.allowed_hosts: %v", err))
		}
	}
	for _, p := range a.FilesystemIsolationExtraPaths {
		if err := checkIsolationPath(p); err != nil {
			errs = append(errs, fmt.Errorf("agent: client.artifact.filesystem_isolation_extra_paths: %v", err))
		}
	}
	return errs
}

// fetcher is the client's artifact.Fetcher for this block; own are the
// agent's listeners. The block has been validated.
func (a ArtifactConfig) fetcher(own []netip.AddrPort) artifact.Fetcher {
	f := artifact.Fetcher{
		MaxDownloadBytes: a.HTTPMaxSize,
		MaxUnpackedBytes: a.DecompressionSizeLimit,
		MaxArchiveFiles:  a.DecompressionFileCountLimit,
		Timeout:          a.HTTPReadTimeout,
		Sources: artifact.Sources{
			AnyLocalPath: a.DisableFilesystemIsolation,
			LocalPaths:   append([]string(nil), a.AllowedLocalPaths...),
			DenyPrivate:  a.DenyPrivateNetworks,
			OwnAddrs:     own,
			UseProxy:     namesProxy(a.SetEnvironmentVariables),
		},
	}
	for _, p := range a.FilesystemIsolationExtraPaths {
		kind, mode, path, err := isolationPath(p)
		if err != nil || !strings.Contains(mode, "r") {
			continue
		}
		if kind == "d" {
			f.Sources.LocalPaths = append(f.Sources.LocalPaths, path)
		} else {
			f.Sources.LocalFiles = append(f.Sources.LocalFiles, path)
		}
	}
	for _, h := range a.AllowedHosts {
		if r, err := artifact.ParseHostRule(h); err == nil {
			f.Sources.AllowedHosts = append(f.Sources.AllowedHosts, r)
		}
	}
	return f
}

// namesProxy reports whether a set_environment_variables list ("A,B")
// names a proxy variable.
func namesProxy(list string) bool {
	for _, v := range strings.Split(list, ",") {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "HTTP_PROXY", "HTTPS_PROXY":
			return true
		}
	}
	return false
}

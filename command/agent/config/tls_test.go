package config

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/tlsutil"
)

func TestTLSBlockParsesNomadsKeys(t *testing.T) {
	src := `
tls {
  http = true
  rpc  = true
  ca_file   = "/etc/drover/nomad-agent-ca.pem"
  cert_file = "/etc/drover/global-server-nomad.pem"
  key_file  = "/etc/drover/global-server-nomad-key.pem"
  verify_server_hostname = true
  verify_https_client    = true
  tls_min_version        = "tls13"
  rpc_upgrade_mode       = false
  tls_cipher_suites      = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
  tls_prefer_server_cipher_suites = true
}
`
	c, warnings, err := Parse("agent.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	requireEqual(t, tlsutil.Config{
		EnableHTTP: true, EnableRPC: true,
		CAFile: "/etc/drover/nomad-agent-ca.pem", CertFile: "/etc/drover/global-server-nomad.pem", KeyFile: "/etc/drover/global-server-nomad-key.pem",
		VerifyServerHostname: true, VerifyHTTPSClient: true, MinVersion: "tls13",
	}, c.TLS)
	want := []string{
		`agent.hcl:11: "tls.rpc_upgrade_mode" is not supported by Drover (there is no mixed plaintext and TLS mode`,
		`agent.hcl:12: "tls.tls_cipher_suites" is not supported by Drover (Go's default cipher suites are used`,
		`agent.hcl:13: "tls.tls_prefer_server_cipher_suites" is not supported by Drover`,
	}
	if len(warnings) != len(want) {
		t.Fatalf("want %d warnings, got %q", len(want), warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d: want prefix %q, got %q", i, w, warnings[i])
		}
	}
}

func TestTLSBlockRefusesOldVersionsWithThePosition(t *testing.T) {
	_, _, err := Parse("agent.hcl", []byte("tls {\n  tls_min_version = \"tls11\"\n}\n"))
	if err == nil || !strings.Contains(err.Error(), `agent.hcl:2:21: tls.tls_min_version: tls.tls_min_version "tls11" is refused`) {
		t.Fatalf("want the old version refused at its position, got %v", err)
	}
}

func TestLaterTLSFilesAddToEarlierOnes(t *testing.T) {
	a := &Config{TLS: tlsutil.Config{EnableRPC: true, CAFile: "ca.pem", CertFile: "a.pem", KeyFile: "a-key.pem"}}
	b := &Config{TLS: tlsutil.Config{EnableHTTP: true, CertFile: "b.pem", KeyFile: "b-key.pem", MinVersion: "tls13"}}
	requireEqual(t, tlsutil.Config{EnableRPC: true, EnableHTTP: true, CAFile: "ca.pem", CertFile: "b.pem", KeyFile: "b-key.pem", MinVersion: "tls13"},
		a.Merge(b).TLS)
}

func TestTLSSettingsThatDoNotFitAreRefused(t *testing.T) {
	c := Dev()
	c.TLS = tlsutil.Config{EnableRPC: true, VerifyHTTPSClient: true, CAFile: "ca.pem"}
	err := c.Validate()
	for _, want := range []string{
		"tls.cert_file is required when tls.rpc is true",
		"tls.key_file is required when tls.rpc is true",
		"tls.verify_https_client needs tls.http = true",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

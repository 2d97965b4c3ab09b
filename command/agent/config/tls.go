package config

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/helper/tlsutil"
)

// ignoredTLS are tls block keys Nomad has and Drover accepts without
// acting on them, with the reason the warning gives.
var ignoredTLS = map[string]string{
	"rpc_upgrade_mode": "there is no mixed plaintext and TLS mode: with tls.rpc every RPC connection must be TLS, " +
		"so turn TLS on for every agent of the cluster together",
	"tls_cipher_suites": "Go's default cipher suites are used: TLS 1.3's are not configurable, " +
		"and for TLS 1.2 only ECDHE suites are offered",
	"tls_prefer_server_cipher_suites": "Go chooses cipher suites itself (the setting is deprecated in Go)",
}

// decodeTLS reads the `tls` block, Nomad's spelling:
//
//	tls {
//	  http = true
//	  rpc  = true
//
//	  ca_file   = "nomad-agent-ca.pem"
//	  cert_file = "global-server-nomad.pem"
//	  key_file  = "global-server-nomad-key.pem"
//
//	  verify_server_hostname = true
//	  verify_https_client    = true
//	  tls_min_version        = "tls12"
//	}
//
// Whether the pieces fit together (files named when TLS is on, verify_*
// only with what they verify) is checked once the files are merged, in
// Config.Validate; whether the files are good, when the agent starts.
func (d *decoder) decodeTLS(body hcl.Body, t *tlsutil.Config) {
	d.walk(body, &section{
		path: "tls",
		attrs: map[string]attrFunc{
			"http":                   boolAttr(&t.EnableHTTP),
			"rpc":                    boolAttr(&t.EnableRPC),
			"ca_file":                strAttr(&t.CAFile),
			"cert_file":              strAttr(&t.CertFile),
			"key_file":               strAttr(&t.KeyFile),
			"verify_server_hostname": boolAttr(&t.VerifyServerHostname),
			"verify_https_client":    boolAttr(&t.VerifyHTTPSClient),
			"tls_min_version":        tlsVersionAttr(&t.MinVersion),
		},
		ignored: ignoredTLS,
	})
}

// tlsVersionAttr accepts the TLS versions Drover allows, and refuses older
// ones with the reason.
func tlsVersionAttr(dst *string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var s string
		if !d.decodeString(key, a.Expr, &s) {
			return
		}
		if err := (tlsutil.Config{MinVersion: s}).Validate(); err != nil {
			d.problem(a.Expr.Range(), key, "%v", err)
			return
		}
		*dst = s
	}
}

// mergeTLS overlays the tls settings o sets onto t: a later file switches
// a setting on or names a file, never switches one off, as in Nomad.
func mergeTLS(t tlsutil.Config, o *tlsutil.Config) tlsutil.Config {
	t.EnableHTTP = t.EnableHTTP || o.EnableHTTP
	t.EnableRPC = t.EnableRPC || o.EnableRPC
	setStr(&t.CAFile, o.CAFile)
	setStr(&t.CertFile, o.CertFile)
	setStr(&t.KeyFile, o.KeyFile)
	t.VerifyServerHostname = t.VerifyServerHostname || o.VerifyServerHostname
	t.VerifyHTTPSClient = t.VerifyHTTPSClient || o.VerifyHTTPSClient
	setStr(&t.MinVersion, o.MinVersion)
	return t
}

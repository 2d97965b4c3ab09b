package config

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// ACLConfig is the agent's `acl` block, Nomad's keys:
//
//	acl {
//	  enabled                  = true
//	  token_ttl                = "30s"  # how long a client caches a resolved token
//	  policy_ttl               = "30s"  # ... and its policies
//	  token_min_expiration_ttl = "1m"   # bounds on a token's ExpirationTTL (servers)
//	  token_max_expiration_ttl = "24h"
//	}
//
// Enabled must be the same on every agent of a cluster: servers answer the
// ACL endpoints and resolve tokens, clients check tokens for their own
// endpoints. Zero durations mean "not set" and keep the defaults.
type ACLConfig struct {
	Enabled               bool
	TokenTTL              time.Duration
	PolicyTTL             time.Duration
	TokenMinExpirationTTL time.Duration
	TokenMaxExpirationTTL time.Duration
}

// ignoredACL are Nomad acl keys Drover accepts and ignores.
var ignoredACL = map[string]string{
	"role_ttl":          "Drover has no ACL roles",
	"replication_token": "Drover has one region; there is nothing to replicate",
	"token_ttl_jitter":  "not implemented",
}

func (d *decoder) decodeACL(body hcl.Body, a *ACLConfig) {
	d.walk(body, &section{
		path: "acl",
		attrs: map[string]attrFunc{
			"enabled":                  boolAttr(&a.Enabled),
			"token_ttl":                durAttr(&a.TokenTTL),
			"policy_ttl":               durAttr(&a.PolicyTTL),
			"token_min_expiration_ttl": durAttr(&a.TokenMinExpirationTTL),
			"token_max_expiration_ttl": durAttr(&a.TokenMaxExpirationTTL),
		},
		ignored: ignoredACL,
	})
}

// merge overlays what o sets. As with every boolean of the agent file, a
// later file cannot switch enabled back off.
func (a ACLConfig) merge(o *ACLConfig) ACLConfig {
	a.Enabled = a.Enabled || o.Enabled
	setDur(&a.TokenTTL, o.TokenTTL)
	setDur(&a.PolicyTTL, o.PolicyTTL)
	setDur(&a.TokenMinExpirationTTL, o.TokenMinExpirationTTL)
	setDur(&a.TokenMaxExpirationTTL, o.TokenMaxExpirationTTL)
	return a
}

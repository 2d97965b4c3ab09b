package config

import (
	"testing"
)

// chroot_env and the exec plugin block reach the client's config, where
// the exec driver reads them, instead of being ignored.
func TestChrootEnvAndTheExecPluginBlockReachTheClient(t *testing.T) {
	c, warnings, err := Parse("agent.hcl", []byte(`
client {
  enabled = true
  chroot_env {
    "/usr"      = "/usr"
    "/srv/etc"  = "/etc"
  }
}
plugin "exec" {
  config {
    allow_caps = ["chown", "net_bind_service"]
    pids_limit = 100
  }
}
`))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings %v", warnings)
	}
	cc := Default().Merge(c).ForClient("/data", []string{"127.0.0.1:4647"}, "127.0.0.1:4646", nil)
	if len(cc.ChrootEnv) != 2 || cc.ChrootEnv["/usr"] != "/usr" || cc.ChrootEnv["/srv/etc"] != "/etc" {
		t.Fatalf("chroot_env %v", cc.ChrootEnv)
	}
	caps, _ := cc.ExecPlugin["allow_caps"].([]any)
	if len(caps) != 2 || cc.ExecPlugin["pids_limit"] == nil {
		t.Fatalf("exec plugin config %#v", cc.ExecPlugin)
	}
}

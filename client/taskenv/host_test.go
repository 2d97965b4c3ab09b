package taskenv

import "testing"

// The red team's variables, exported in the agent's environment.
var leaked = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
	"CONSUL_TOKEN", "CONSUL_HTTP_TOKEN", "VAULT_TOKEN", "NOMAD_TOKEN", "DROVER_TOKEN"}

func TestHostEnvDropsTheDefaultDenylistAndTheOperatorsOwn(t *testing.T) {
	for _, k := range leaked {
		t.Setenv(k, "secret-"+k)
	}
	t.Setenv("DATABASE_PASSWORD", "hunter2")
	t.Setenv("KEEP_ME", "yes")
	got := HostEnv([]string{"DATABASE_PASSWORD"})
	for _, k := range append(leaked, "DATABASE_PASSWORD") {
		if v, ok := got[k]; ok {
			t.Errorf("%s=%q reached the host env", k, v)
		}
	}
	if got["KEEP_ME"] != "yes" {
		t.Errorf("a variable on no list was dropped: %v", got["KEEP_ME"])
	}
}

func TestIsolatedBaseKeepsOnlyPathAndLocale(t *testing.T) {
	host := map[string]string{"PATH": "/opt/bin:/usr/bin", "LANG": "C.UTF-8", "LC_TIME": "en_GB.UTF-8", "TZ": "UTC",
		"HOME": "/root", "DATABASE_PASSWORD": "hunter2", "USER": "root", "LCX": "no", "SSH_AUTH_SOCK": "/tmp/agent"}
	got := IsolatedBase(host)
	want := map[string]string{"PATH": "/opt/bin:/usr/bin", "LANG": "C.UTF-8", "LC_TIME": "en_GB.UTF-8", "TZ": "UTC"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got := IsolatedBase(map[string]string{"HOME": "/root"}); got["PATH"] != DefaultPath || len(got) != 1 {
		t.Errorf("without an agent PATH: %v, want only PATH=%s", got, DefaultPath)
	}
}

package jobspec

import "testing"

func TestDriverConfigKeepsArbitraryStructure(t *testing.T) {
	job := mustParse(t, inTask(`
driver = "docker"
config {
  image    = "nginx:1.27"
  ports    = ["http"]
  port     = 8080
  big      = 10000000000
  ratio    = 1.5
  tty      = true
  nothing  = null
  sysctl   = { "net.core.somaxconn" = "16384" }
  volumes  = [{ source = "a" }, { source = "b" }]
  mixed    = [1, "a"]
  empty    = []

  logging {
    type = "syslog"
    config {
      tag = "web"
    }
  }

  port_map "http" {
    container = 80
  }
}`))
	want := map[string]interface{}{
		"image":   "nginx:1.27",
		"ports":   []interface{}{"http"},
		"port":    8080,
		"big":     10000000000,
		"ratio":   1.5,
		"tty":     true,
		"nothing": nil,
		"sysctl":  map[string]interface{}{"net.core.somaxconn": "16384"},
		"volumes": []map[string]interface{}{{"source": "a"}, {"source": "b"}},
		"mixed":   []interface{}{1, "a"},
		"empty":   []interface{}{},
		"logging": []map[string]interface{}{{
			"type":   "syslog",
			"config": []map[string]interface{}{{"tag": "web"}},
		}},
		"port_map": []map[string]interface{}{{
			"http": []map[string]interface{}{{"container": 80}},
		}},
	}
	assertEqual(t, want, job.TaskGroups[0].Tasks[0].Config)
}

func TestDriverConfigRejectsAKeyUsedAsArgumentAndBlock(t *testing.T) {
	_, err := parseString(t, "job.hcl", inTask(`
config {
  mount = []
  mount {}
}`))
	assertErrorContains(t, err, `Duplicate config key; "mount" is already set as an argument`)
}

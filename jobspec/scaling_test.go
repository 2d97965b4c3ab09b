package jobspec

import (
	"strings"
	"testing"
)

func TestGroupScalingBlockIsDecodedWithItsPolicyKeptAsData(t *testing.T) {
	src := `
job "web" {
  group "web" {
    count = 2
    scaling {
      enabled = false
      min     = 1
      max     = 10
      policy {
        cooldown = "1m"
        check "cpu" {
          source = "prometheus"
          strategy "target-value" {
            target = 70
          }
        }
      }
    }
    task "app" {
      driver = "mock_driver"
      scaling "mem" {
        min = 64
      }
    }
  }
}
`
	job, warnings, err := ParseWithWarnings(&ParseConfig{Path: "web.hcl", Body: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	s := job.TaskGroups[0].Scaling
	if s == nil || *s.Enabled || *s.Min != 1 || *s.Max != 10 {
		t.Fatalf("scaling: %+v", s)
	}
	if s.Policy["cooldown"] != "1m" {
		t.Fatalf("policy: %#v", s.Policy)
	}
	check := s.Policy["check"].([]map[string]interface{})[0]["cpu"].([]map[string]interface{})[0]
	strategy := check["strategy"].([]map[string]interface{})[0]["target-value"].([]map[string]interface{})[0]
	if check["source"] != "prometheus" || strategy["target"] != 70 {
		t.Fatalf("policy check: %#v", check)
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, `Block "scaling" ignored`) || !strings.Contains(joined, "web.hcl:21") {
		t.Fatalf("the task's scaling block must be warned about, at its line:\n%s", joined)
	}
	if strings.Contains(joined, "web.hcl:5") {
		t.Fatalf("the group's scaling block was warned about:\n%s", joined)
	}
}

func TestGroupScalingBlockErrors(t *testing.T) {
	cases := map[string]string{
		"two policies":       "scaling {\n max = 3\n policy {}\n policy {}\n }",
		"two scaling blocks": `scaling { max = 3 }` + "\n" + `scaling { max = 4 }`,
		"a non-number min":   `scaling { min = "lots" }`,
		"an unknown field":   `scaling { maximum = 3 }`,
	}
	wants := map[string]string{
		"two policies": "Duplicate policy block", "two scaling blocks": "Duplicate scaling block",
		"a non-number min": "min", "an unknown field": "maximum",
	}
	for name, block := range cases {
		src := "job \"j\" {\n  group \"g\" {\n" + block + "\n    task \"t\" {\n      driver = \"mock_driver\"\n    }\n  }\n}\n"
		_, err := Parse("j.hcl", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), wants[name]) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, wants[name])
		}
	}
}

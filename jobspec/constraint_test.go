package jobspec

import (
	"testing"

	"github.com/drover-sched/drover/api"
)

func TestConstraintShorthandsMapToOperands(t *testing.T) {
	cases := []struct {
		name string
		body string
		want api.Constraint
	}{
		{"the operator defaults to equality", `attribute = "${attr.kernel.name}"
			value = "linux"`, api.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		{"an explicit operator", `attribute = "${attr.kernel.name}"
			operator = "regexp"
			value = "^lin"`, api.Constraint{LTarget: "${attr.kernel.name}", RTarget: "^lin", Operand: "regexp"}},
		// Nomad's parser writes the value as well, and the Nomad API shows it.
		{"distinct_hosts", `distinct_hosts = true`, api.Constraint{Operand: "distinct_hosts", RTarget: "true"}},
		{"distinct_hosts = true wins over a value", `distinct_hosts = true
			value = "false"`, api.Constraint{Operand: "distinct_hosts", RTarget: "true"}},
		{"distinct_hosts = false does nothing", `distinct_hosts = false`, api.Constraint{Operand: "="}},
		{"distinct_hosts as an operator", `operator = "distinct_hosts"
			value = "true"`, api.Constraint{Operand: "distinct_hosts", RTarget: "true"}},
		{"distinct_property puts the property on the left", `distinct_property = "${meta.rack}"`,
			api.Constraint{LTarget: "${meta.rack}", Operand: "distinct_property"}},
		{"distinct_property with a limit", `distinct_property = "${meta.rack}"
			value = "3"`, api.Constraint{LTarget: "${meta.rack}", RTarget: "3", Operand: "distinct_property"}},
		{"regexp", `attribute = "${attr.os.name}"
			regexp = "^deb"`, api.Constraint{LTarget: "${attr.os.name}", RTarget: "^deb", Operand: "regexp"}},
		{"version", `attribute = "${attr.nomad.version}"
			version = ">= 1.2"`, api.Constraint{LTarget: "${attr.nomad.version}", RTarget: ">= 1.2", Operand: "version"}},
		{"semver", `attribute = "${attr.v}"
			semver = "~> 2"`, api.Constraint{LTarget: "${attr.v}", RTarget: "~> 2", Operand: "semver"}},
		{"set_contains", `attribute = "${meta.tags}"
			set_contains = "a,b"`, api.Constraint{LTarget: "${meta.tags}", RTarget: "a,b", Operand: "set_contains"}},
		{"set_contains_any", `attribute = "${meta.tags}"
			set_contains_any = "a"`, api.Constraint{LTarget: "${meta.tags}", RTarget: "a", Operand: "set_contains_any"}},
		{"set_contains_all", `attribute = "${meta.tags}"
			set_contains_all = "a"`, api.Constraint{LTarget: "${meta.tags}", RTarget: "a", Operand: "set_contains_all"}},
		{"is_set as an operator", `attribute = "${meta.x}"
			operator = "is_set"`, api.Constraint{LTarget: "${meta.x}", Operand: "is_set"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mustParse(t, "job \"j\" {\n  constraint {\n"+tc.body+"\n  }\n}\n")
			assertEqual(t, []*api.Constraint{&tc.want}, job.Constraints)
		})
	}
}

func TestAffinityShorthandsMapToOperands(t *testing.T) {
	cases := []struct {
		name string
		body string
		want api.Affinity
	}{
		{"the operator defaults to equality and the weight stays unset", `attribute = "${node.class}"
			value = "fast"`, api.Affinity{LTarget: "${node.class}", RTarget: "fast", Operand: "="}},
		{"a weight", `attribute = "${node.class}"
			value = "fast"
			weight = -50`, api.Affinity{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: new(int8(-50))}},
		{"regexp", `attribute = "${node.class}"
			regexp = "^f"`, api.Affinity{LTarget: "${node.class}", RTarget: "^f", Operand: "regexp"}},
		{"set_contains_any", `attribute = "${meta.tags}"
			set_contains_any = "a"`, api.Affinity{LTarget: "${meta.tags}", RTarget: "a", Operand: "set_contains_any"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mustParse(t, "job \"j\" {\n  affinity {\n"+tc.body+"\n  }\n}\n")
			assertEqual(t, []*api.Affinity{&tc.want}, job.Affinities)
		})
	}
}

package jobspec

import "testing"

func TestRuntimeInterpolationsAreKeptVerbatim(t *testing.T) {
	cases := []struct {
		name string
		expr string
		want string
	}{
		{"a port", `"${NOMAD_PORT_http}"`, "${NOMAD_PORT_http}"},
		{"a node attribute", `"${attr.kernel.name}"`, "${attr.kernel.name}"},
		{"a node property", `"${node.unique.id}"`, "${node.unique.id}"},
		{"node metadata", `"${meta.foo}"`, "${meta.foo}"},
		{"an allocation variable", `"${NOMAD_ALLOC_ID}"`, "${NOMAD_ALLOC_ID}"},
		{"an attribute with dashes", `"${attr.unique.network.ip-address}"`, "${attr.unique.network.ip-address}"},
		{"a numeric path step", `"${attr.gpu.0.name}"`, "${attr.gpu.0.name}"},
		{"an environment lookup", `"${env["HOME"]}"`, `${env["HOME"]}`},
		{"text around it", `"${NOMAD_TASK_DIR}/bin/run --id=${NOMAD_ALLOC_INDEX}"`, "${NOMAD_TASK_DIR}/bin/run --id=${NOMAD_ALLOC_INDEX}"},
		{"mixed with a parse-time variable", `"${var.prefix}-${NOMAD_ALLOC_INDEX}"`, "app-${NOMAD_ALLOC_INDEX}"},
		{"spaces inside the braces are dropped", `"${ attr.kernel.name }"`, "${attr.kernel.name}"},
		{"a bare reference becomes an interpolation", `node.datacenter`, "${node.datacenter}"},
		{"through a function", `join("/", [node.datacenter, "x"])`, "${node.datacenter}/x"},
		{"two paths under one root", `"${attr.a.b}:${attr.a.c}"`, "${attr.a.b}:${attr.a.c}"},
		{"an escaped interpolation is literal", `"$${HOME}"`, "${HOME}"},
		{"any undefined root, as in Nomad", `"${HOME}/x"`, "${HOME}/x"},
		{"in a heredoc", "<<EOT\nport=${NOMAD_PORT_http}\nEOT\n", "port=${NOMAD_PORT_http}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "variable \"prefix\" {\n  default = \"app\"\n}\njob \"j\" {\n  region = " + tc.expr + "\n}\n"
			job := mustParse(t, src)
			if *job.Region != tc.want {
				t.Errorf("got %q, want %q", *job.Region, tc.want)
			}
		})
	}
}

func TestRuntimeInterpolationsInLocalsAreKept(t *testing.T) {
	job := mustParse(t, `
locals {
  addr = "${NOMAD_IP_http}:${NOMAD_PORT_http}"
}
job "j" {
  meta {
    addr = local.addr
  }
}`)
	assertEqual(t, map[string]string{"addr": "${NOMAD_IP_http}:${NOMAD_PORT_http}"}, job.Meta)
}

func TestRuntimeValuesCannotBeUsedWhereAValueIsNeeded(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		wants []string
	}{
		{"as a number", `count = attr.cpu.numcores`,
			[]string{`job.hcl:3,9-26: Incorrect attribute value type; Inappropriate value for attribute "count": a number is required.`}},
		{"as both a value and an object", `meta = { a = "${meta.x}", b = "${meta.x.y}" }`,
			[]string{"Runtime value used at parse time"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseString(t, "job.hcl", inGroup(tc.body))
			assertErrorContains(t, err, tc.wants...)
		})
	}
}

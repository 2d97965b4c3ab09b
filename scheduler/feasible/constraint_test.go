package feasible

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func constraintNode() *structs.Node {
	n := MockNode()
	n.ID = "11111111-2222-3333-4444-555555555555"
	n.Name = "worker-7"
	n.Datacenter = "eu-west-1a"
	n.NodeClass = "large"
	n.NodePool = "gpu"
	n.Attributes = n.Attributes.With("kernel.version", "5.10.0")
	n.Attributes = n.Attributes.With("nomad.version", "1.7.3-beta.1")
	n.Attributes = n.Attributes.With("cpu.numcores", "16")
	n.Attributes = n.Attributes.With("os.name", "ubuntu")
	n.Attributes = n.Attributes.With("features", "avx,sse4, aes")
	n.Meta["rack"] = "r12"
	n.Meta["wanted_rack"] = "r12"
	n.Meta["unique.serial"] = "SN-1"
	return n
}

func TestMeetsConstraint(t *testing.T) {
	node := constraintNode()
	cases := []struct {
		name   string
		l, op  string
		r      string
		expect bool
	}{
		{"equal attribute matches", "${attr.kernel.name}", "=", "linux", true},
		{"equal attribute with a different value fails", "${attr.kernel.name}", "=", "windows", false},
		{"double equals is equality", "${attr.os.name}", "==", "ubuntu", true},
		{"is is equality", "${attr.os.name}", "is", "debian", false},
		{"equality on a missing attribute fails", "${attr.missing}", "=", "x", false},
		{"not equal passes on a different value", "${attr.kernel.name}", "!=", "windows", true},
		{"not equal fails on the same value", "${attr.kernel.name}", "!=", "linux", false},
		{"not passes on a missing attribute", "${attr.missing}", "not", "x", true},
		{"numbers compare numerically: 16 > 9", "${attr.cpu.numcores}", ">", "9", true},
		{"numbers compare numerically: 16 < 9 fails", "${attr.cpu.numcores}", "<", "9", false},
		{"less or equal on equal numbers", "${attr.cpu.numcores}", "<=", "16", true},
		{"greater or equal on a bigger number fails", "${attr.cpu.numcores}", ">=", "17", false},
		{"strings compare lexically", "${attr.os.name}", ">", "debian", true},
		{"strings compare lexically, negative", "${attr.os.name}", "<", "debian", false},
		{"ordering on a missing attribute fails", "${attr.missing}", "<", "1", false},
		{"regexp matches", "${attr.kernel.version}", "regexp", `^5\.\d+`, true},
		{"regexp does not match", "${attr.kernel.version}", "regexp", `^6\.`, false},
		{"a regexp that does not compile never matches", "${attr.kernel.version}", "regexp", `(`, false},
		{"version range matches", "${attr.kernel.version}", "version", ">= 5.4, < 6.0", true},
		{"version range does not match", "${attr.kernel.version}", "version", ">= 6.0", false},
		{"pessimistic version matches", "${attr.kernel.version}", "version", "~> 5.10", true},
		{"version allows a prerelease", "${attr.nomad.version}", "version", ">= 1.7.0", true},
		{"semver refuses a prerelease the constraint does not name", "${attr.nomad.version}", "semver", ">= 1.7.0", false},
		{"semver accepts a prerelease the constraint names", "${attr.nomad.version}", "semver", ">= 1.7.3-alpha", true},
		{"semver on a release", "${attr.kernel.version}", "semver", "< 6.0.0", true},
		{"an unparsable version never matches", "${attr.os.name}", "version", ">= 1.0", false},
		{"set_contains with every element", "${attr.features}", "set_contains", "avx,aes", true},
		{"set_contains missing one element", "${attr.features}", "set_contains", "avx,avx512", false},
		{"set_contains_all is set_contains", "${attr.features}", "set_contains_all", "sse4", true},
		{"set_contains_any with one element present", "${attr.features}", "set_contains_any", "avx512,aes", true},
		{"set_contains_any with none present", "${attr.features}", "set_contains_any", "avx512,neon", false},
		{"is_set on a present attribute", "${attr.os.name}", "is_set", "", true},
		{"is_set on a missing attribute", "${attr.missing}", "is_set", "", false},
		{"is_not_set on a missing attribute", "${attr.missing}", "is_not_set", "", true},
		{"is_not_set on a present attribute", "${attr.os.name}", "is_not_set", "", false},
		{"meta target", "${meta.rack}", "=", "r12", true},
		{"unique meta target", "${meta.unique.serial}", "=", "SN-1", true},
		{"node id target", "${node.unique.id}", "=", "11111111-2222-3333-4444-555555555555", true},
		{"node name target", "${node.unique.name}", "regexp", "^worker-", true},
		{"datacenter target", "${node.datacenter}", "=", "eu-west-1a", true},
		{"class target", "${node.class}", "=", "large", true},
		{"pool target", "${node.pool}", "=", "gpu", true},
		{"pool target negative", "${node.pool}", "=", "default", false},
		{"unknown interpolation is missing", "${node.region}", "=", "global", false},
		{"right side interpolated from meta", "${meta.rack}", "=", "${meta.wanted_rack}", true},
		{"right side interpolated and different", "${node.class}", "=", "${meta.rack}", false},
		{"right side interpolation missing", "${meta.rack}", "=", "${meta.nope}", false},
		{"unknown operator fails", "${attr.os.name}", "~", "ubuntu", false},
	}
	ctx := NewEvalContext(nil, nil, nil, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &structs.Constraint{LTarget: tc.l, Operand: tc.op, RTarget: tc.r}
			if got := meetsConstraint(ctx, c, node); got != tc.expect {
				t.Fatalf("%s: got %v, want %v", c, got, tc.expect)
			}
		})
	}
}

func TestRegexpsAreCompiledOncePerContext(t *testing.T) {
	ctx := NewEvalContext(nil, nil, nil, nil)
	node := constraintNode()
	c := &structs.Constraint{LTarget: "${attr.os.name}", Operand: "regexp", RTarget: "^ubu"}
	for i := 0; i < 3; i++ {
		if !meetsConstraint(ctx, c, node) {
			t.Fatal("regexp should match")
		}
	}
	if len(ctx.regexps) != 1 {
		t.Fatalf("want one cached regexp, got %d", len(ctx.regexps))
	}
}

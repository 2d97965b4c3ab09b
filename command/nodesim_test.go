package command

import (
	"bytes"
	"strings"
	"testing"
)

func TestNodesimRefusesBadFlagsNamingThem(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nodesim", "-meta", "rack"}, `-meta "rack": expected key=value, such as rack=r{i%50}`},
		{[]string{"nodesim", "-count", "0"}, "count: expected between 1 and 1000000 nodes, got 0"},
		{[]string{"nodesim", "-meta", "rack=r{x}"}, `meta "rack": template {x}: expected {i}, {i%N} or {i/N}`},
		{[]string{"nodesim", "-fault-stop-heartbeat", "2"}, "fault: fractions must be between 0 and 1"},
		{[]string{"nodesim", "-ca-cert", "/nonexistent/ca.pem"}, "Error loading TLS material"},
		{[]string{"nodesim", "extra"}, "This command takes no arguments"},
	} {
		var out, errOut bytes.Buffer
		code, ok := runVerb(c.args, &out, &errOut)
		if !ok || code != 1 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: code %d ok %v stderr %q; want exit 1 and %q", c.args, code, ok, errOut.String(), c.want)
		}
	}
}

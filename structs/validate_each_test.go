package structs

import (
	"strings"
	"testing"
)

func TestValidateEachNamesEachBlockByItsIndex(t *testing.T) {
	p := newProblems().at(`group "web"`)
	validateEach(p, "spread", []*Spread{{Attribute: "${node.datacenter}", Weight: 50}, {Weight: 50}})
	got := strings.Join(*p.list, "\n")
	if !strings.Contains(got, `group "web" spread[1]: `) || strings.Contains(got, "spread[0]") {
		t.Fatalf("problems:\n%s\nwant spread[1] only", got)
	}
}

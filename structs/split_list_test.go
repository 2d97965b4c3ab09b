package structs

import (
	"slices"
	"testing"
)

func TestSplitListTrimsAndDropsBlanks(t *testing.T) {
	for in, want := range map[string][]string{
		"":                   nil,
		" , ,":               nil,
		"root":               {"root"},
		" exec, ,qemu ,java": {"exec", "qemu", "java"},
	} {
		if got := SplitList(in); !slices.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("SplitList(%q) = %#v, want %#v", in, got, want)
		}
	}
}

package execinit

import (
	"slices"
	"testing"

	"github.com/drover-sched/drover/helper/mountinfo"
)

func TestMountinfoEscapesAreUndone(t *testing.T) {
	for in, want := range map[string]string{
		`/plain`:             "/plain",
		`/a\040b`:            "/a b",
		`/tab\011x\134y`:     "/tab\tx\\y",
		`/trailing\04`:       `/trailing\04`,
		`/not\8octal\040end`: `/not\8octal end`,
	} {
		if got := mountinfo.Unescape(in); got != want {
			t.Errorf("mountinfo.Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// The fallback walk finds a mount and those below it, parents first.
func TestMountsUnderListsParentsFirst(t *testing.T) {
	all, err := mountsUnder("/")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[0] != "/" || !slices.Contains(all, "/proc") {
		t.Fatalf("mounts under /: %v", all)
	}
	proc, err := mountsUnder("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range proc {
		if p != "/proc" && len(p) <= len("/proc/") {
			t.Errorf("mountsUnder(/proc) holds %q", p)
		}
	}
	if proc[0] != "/proc" {
		t.Errorf("mountsUnder(/proc) = %v, want /proc first", proc)
	}
}

package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/fuzzseed"
)

// go-bexpr's parser backtracks: its work grows fourfold with each level of
// parentheses, up to the two million steps it allows by default, and its
// recursion with the nesting. Against a running agent, ?filter= with ten
// nested parentheses (29 bytes) cost 60 MB and 200 ms; with 120,000 (a
// 240 KB query string, under the header limit) 500 MB, and four at once
// took the agent to 2.7 GB. A filter is now bounded in length and in the
// parser's work, so it costs a few MB at most and is refused saying why.
func TestAFilterCannotMakeTheAgentHoldMuch(t *testing.T) {
	const budget = 16 << 20
	ors := func(n int) string {
		p := make([]string, n)
		for i := range p {
			p[i] = fmt.Sprintf(`Name contains "web-%d"`, i)
		}
		return strings.Join(p, " or ")
	}
	refused := []struct{ name, expr, want string }{
		{"ten nested parentheses", strings.Repeat("(", 10) + `ID == "x"` + strings.Repeat(")", 10), "too complex"},
		{"sixty thousand nested parentheses", strings.Repeat("(", 60000) + `ID == "x"` + strings.Repeat(")", 60000), "longer than"},
		{"thousands of terms", ors(5000), "longer than"},
	}
	for _, tc := range refused {
		t.Run(tc.name+" is refused cheaply", func(t *testing.T) {
			before := fuzzseed.AllocatedBytes()
			_, err := parseFilter(tc.expr)
			used := fuzzseed.AllocatedBytes() - before
			var ce *codedError
			if !errors.As(err, &ce) || ce.code != http.StatusBadRequest || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a 400 saying %q", err, tc.want)
			}
			if used > budget {
				t.Fatalf("refusing a %d-byte filter allocated %d MB", len(tc.expr), used>>20)
			}
			if len(err.Error()) > 2<<10 {
				t.Fatalf("the 400 quotes %d bytes of the filter back", len(err.Error()))
			}
		})
	}
	for _, expr := range []string{
		`(ID contains "web" or Name contains "web") and Status != "dead" and Meta["team"] == "a"`,
		`(a == 1 and (b == 2 or (c == 3 and (d == 4 or e == 5))))`,
		`(((((Status == "running")))))`,
		ors(500),
	} {
		if _, err := parseFilter(expr); err != nil {
			t.Fatalf("a filter Nomad's users write (%d bytes) is refused: %v", len(expr), err)
		}
	}
}

package config

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/fuzzseed"
)

// FuzzAgentConfig feeds agent configuration files, HCL or JSON, to the
// parser the agent runs at start and on every reload (SIGHUP). A config
// file is the operator's, not an attacker's, but a typo must give an error
// naming the key, never a crash of the agent being reloaded. Whatever the
// input:
//
//   - Parse returns a config or an *Error whose every problem says
//     something, and never panics or recurses deeply;
//   - a parsed config merges onto the defaults and validates without a
//     panic;
//   - Copy, which a reload uses so the new config never aliases the
//     running one, gives an equal config that shares no memory with it.
func FuzzAgentConfig(f *testing.F) {
	for _, seed := range fuzzseed.Files(f, "testdata/*.hcl", "testdata/*.json") {
		f.Add(seed, false)
	}
	for _, s := range fuzzseed.GoStringLiterals(f, "*_test.go", looksLikeAgentConfig) {
		f.Add([]byte(s), strings.HasPrefix(strings.TrimSpace(s), "{"))
	}
	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		// As FuzzParse (jobspec) does: the nesting check before the parser
		// must leave it far below this much stack.
		defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
		name := "agent.hcl"
		if asJSON {
			name = "agent.json"
		}
		c, _, err := Parse(name, src)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("the error is a %T without problems: %v", err, err)
			}
			for _, p := range ce.Problems {
				if strings.TrimSpace(p) == "" {
					t.Fatalf("an empty problem in %q", ce.Problems)
				}
			}
			return
		}
		if c == nil {
			t.Fatal("no config and no error")
		}

		merged := Default().Merge(c)
		_ = merged.Validate()

		cp := merged.Copy()
		if d := fuzzseed.Diff(merged, cp); d != "" {
			t.Fatalf("Copy changed the config: %s", d)
		}
		// The same file parsed again is the reference: a copy made with
		// Copy would share whatever Copy wrongly shares.
		again, _, err := Parse(name, src)
		if err != nil {
			t.Fatalf("the second parse of the same file failed: %v", err)
		}
		fuzzseed.Scribble(cp)
		if d := fuzzseed.Diff(Default().Merge(again), merged); d != "" {
			t.Fatalf("a copy shares memory with its original: changing the copy changed %s", d)
		}
	})
}

// looksLikeAgentConfig keeps test literals that hold agent configuration.
func looksLikeAgentConfig(s string) bool {
	for _, kw := range []string{"server", "client", "data_dir", "ports", "datacenter", "name ="} {
		if strings.Contains(s, kw) && (strings.Contains(s, "{") || strings.Contains(s, "=")) {
			return true
		}
	}
	return false
}

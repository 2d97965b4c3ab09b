package command

import (
	"bytes"
	"strings"
	"testing"
)

// A verb's help is printed once: on -help to stdout alone (exit 0), after
// a bad flag or a wrong argument count to stderr after the problem
// (exit 1), never twice and never on both streams.
func TestAVerbsHelpIsPrintedOnce(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr int // times "Usage: drover job status" appears
		problem        string
	}{
		{[]string{"job", "status", "-help"}, 0, 1, 0, ""},
		{[]string{"job", "status", "-h"}, 0, 1, 0, ""},
		{[]string{"job", "status", "-bogus"}, 1, 0, 1, "Error parsing arguments: flag provided but not defined: -bogus"},
		{[]string{"job", "status", "a", "b"}, 1, 0, 1, "This command takes at most one argument"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		usage := "Usage: drover job status"
		if code != tc.code || strings.Count(out.String(), usage) != tc.stdout || strings.Count(errb.String(), usage) != tc.stderr ||
			!strings.Contains(errb.String(), tc.problem) {
			t.Errorf("%v: exit %d, help %d times on stdout and %d on stderr (want %d: %d and %d, and %q); stderr:\n%s",
				tc.args, code, strings.Count(out.String(), usage), strings.Count(errb.String(), usage), tc.code, tc.stdout, tc.stderr, tc.problem, errb.String())
		}
		if tc.problem != "" && strings.Index(errb.String(), tc.problem) > strings.Index(errb.String(), usage) {
			t.Errorf("%v: the problem comes after the help:\n%s", tc.args, errb.String())
		}
	}
}

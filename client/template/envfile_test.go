package template

import (
	"strings"
	"testing"
)

// TestParseEnvFileFollowsNomadsFormat checks the env file rules Nomad's
// client uses for `env = true` templates, case by case.
func TestParseEnvFileFollowsNomadsFormat(t *testing.T) {
	cases := []struct {
		name, in string
		want     map[string]string
	}{
		{"plain assignments", "A=1\nB=two words\n", map[string]string{"A": "1", "B": "two words"}},
		{"blank lines and comments are skipped", "\n# a comment\n   \n  # indented comment\nA=1\n", map[string]string{"A": "1"}},
		{"whitespace around key and value is trimmed", "  KEY = This is ok!   \n", map[string]string{"KEY": "This is ok!"}},
		{"export is dropped", "export FOO=bar\n", map[string]string{"FOO": "bar"}},
		{"a key named export", "export=1\n", map[string]string{"export": "1"}},
		{"a trailing comment ends an unquoted value", "KEY2= Also ok.    # a note\nX=a#b\n", map[string]string{"KEY2": "Also ok.", "X": "a"}},
		{"empty values", "EMPTY=\nQ=''\nD=\"\"\n", map[string]string{"EMPTY": "", "Q": "", "D": ""}},
		{"single quotes keep their text", `S='a "b" \n # c'`, map[string]string{"S": `a "b" \n # c`}},
		{"double quotes take JSON escapes", `D="line1\nline2\t\"q\" \\ \/ \u00e9 \ud83d\udd25"`, map[string]string{"D": "line1\nline2\t\"q\" \\ / é 🔥"}},
		{"quoting styles mix within a value", `SOME_KEY = normal unquoted \text 'plus single quoted\' "\"double quoted " # EOL`,
			map[string]string{"SOME_KEY": `normal unquoted \text plus single quoted\ "double quoted `}},
		{"keys may hold dots and slashes", "a.b/c_D9=1\n_under=2\n", map[string]string{"a.b/c_D9": "1", "_under": "2"}},
		{"the last of a repeated key wins", "A=1\nA=2\n", map[string]string{"A": "2"}},
		{"an equals sign in the value", "URL=http://x/?a=b\n", map[string]string{"URL": "http://x/?a=b"}},
		{"CRLF line ends", "A=1\r\nB=2\r\n", map[string]string{"A": "1", "B": "2"}},
		{"non-ASCII values pass through", "NAME=Zoë\n", map[string]string{"NAME": "Zoë"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnvFile([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for k, v := range tc.want {
				if gv, ok := got[k]; !ok || gv != v {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestParseEnvFileRejectsBadLines(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no equals sign", "A=1\nnot an assignment\n", "line 2: \"not an assignment\" has no ="},
		{"an empty key", "=1\n", "line 1: empty key"},
		{"a key starting with a digit", "1A=x\n", `key "1A" must start with a letter or _`},
		{"a key with a dash", "A-B=x\n", `key "A-B" may hold only letters`},
		{"an unmatched double quote", `A="open`, `unmatched "`},
		{"an unmatched single quote", `A='open`, "unmatched '"},
		{"an unknown escape", `A="\q"`, `invalid escape sequence \q`},
		{"a half surrogate pair", `A="\ud83d"`, "incomplete Unicode surrogate pair"},
		{"a short unicode escape", `A="\u12"`, `incomplete \u escape`},
		{"an escape at the end", `A="x\`, "incomplete escape sequence"},
		{"a control character", "A=x\x01y\n", "control character 0x01"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnvFile([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

package mountinfo

import "testing"

func TestUnescapeUndoesTheKernelsOctalEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"/plain":          "/plain",
		`/with\040space`:  "/with space",
		`/tab\011and\134`: "/tab\tand\\",
		`/short\04`:       `/short\04`,
		`/not\9990octal`:  `/not\9990octal`,
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

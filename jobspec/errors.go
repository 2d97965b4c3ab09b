package jobspec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Error is returned for a job file that cannot be parsed or decoded. It holds
// every problem found, each with its position, so that a user can fix them
// all in one go; callers that want positions can read Diagnostics.
type Error struct {
	Diagnostics hcl.Diagnostics
}

// Error renders one line per problem, "file:line,col-col: summary; detail".
func (e *Error) Error() string {
	var lines []string
	for _, d := range e.Diagnostics {
		if d.Severity != hcl.DiagError {
			continue
		}
		lines = append(lines, formatDiagnostic(d))
	}
	return strings.Join(lines, "\n")
}

func formatDiagnostic(d *hcl.Diagnostic) string {
	var b strings.Builder
	if d.Subject != nil {
		fmt.Fprintf(&b, "%s: ", d.Subject)
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString("; ")
		b.WriteString(d.Detail)
	}
	return b.String()
}

// errorFrom returns nil if diags holds no error, and an *Error otherwise.
// Warnings alone are not an error.
func errorFrom(diags hcl.Diagnostics) error {
	if !diags.HasErrors() {
		return nil
	}
	return &Error{Diagnostics: diags}
}

// newDiag builds an error diagnostic about rng.
func newDiag(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detail, args...),
		Subject:  rng.Ptr(),
	}
}

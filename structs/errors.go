package structs

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors that callers across packages branch on. RPC errors cross
// the wire as strings, so each sentinel's text is unique and stable: use
// IsErr to test an error that came back from a remote call.
var (
	ErrNotLeader         = errors.New("no cluster leader")
	ErrNoLeader          = errors.New("no cluster leader")
	ErrNotFound          = errors.New("not found")
	ErrNodeNotReady      = errors.New("node is not ready")
	ErrNodeSecretDenied  = errors.New("node secret ID does not match")
	ErrNodeSecretMissing = errors.New("node secret ID is missing")
	// ErrIndexConflict starts with Nomad's text (its API's
	// RegisterEnforceIndexErrPrefix): Nomad's `job run -check-index` and
	// scripts written for it recognise the refusal by that prefix.
	//lint:ignore ST1005 Nomad's exact text, which its users match on.
	ErrIndexConflict     = errors.New("Enforcing job modify index")
	ErrInvalidTransition = errors.New("invalid allocation transition")
	ErrTokenMismatch     = errors.New("evaluation token does not match")
	// ErrPermissionDenied is Nomad's text exactly: clients and scripts
	// match it, and the HTTP layer answers it with a 403.
	//lint:ignore ST1005 Nomad's exact text, which its users match on.
	ErrPermissionDenied = errors.New("Permission denied")
	// ErrTokenNotFound is a token secret that resolves to no token, or to
	// an expired one (Nomad's text; a 403 over HTTP).
	ErrTokenNotFound = errors.New("ACL token not found")
	// ErrACLDisabled answers the ACL endpoints while ACLs are off, in
	// Nomad's words (a 400 over HTTP).
	ErrACLDisabled = errors.New("ACL support disabled")
	// ErrACLBootstrapDone refuses a second bootstrap; the servers add the
	// reset index an operator must write to allow another (see
	// ACL.Bootstrap).
	ErrACLBootstrapDone = errors.New("ACL bootstrap already done")
	// ErrJobRegistrationDisabled refuses the job writes the scheduler
	// configuration's RejectJobRegistration covers (a 403 over HTTP). As
	// in Nomad, a management token is exempt when ACLs are on; with ACLs
	// off every caller is refused the same way.
	ErrJobRegistrationDisabled = errors.New("job registration, dispatch and scale are disabled by the scheduler configuration " +
		"(RejectJobRegistration is true; an operator can allow them again with " +
		"`drover operator scheduler set-config -reject-job-registration=false`)")
)

// IsErr reports whether err is, or carries the text of, the sentinel target.
// Errors returned by net/rpc lose their identity and keep only their text.
func IsErr(err, target error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, target) {
		return true
	}
	return strings.Contains(err.Error(), target.Error())
}

// ValidationError collects every problem found in a user-supplied value, each
// with the path of the field it concerns, so a user fixes them all at once.
type ValidationError struct {
	Problems []string
}

// Error lists the problems, one per line.
func (v *ValidationError) Error() string {
	if len(v.Problems) == 1 {
		return v.Problems[0]
	}
	return fmt.Sprintf("%d problems:\n  * %s", len(v.Problems), strings.Join(v.Problems, "\n  * "))
}

// problems accumulates validation messages under a path prefix.
type problems struct {
	prefix string
	list   *[]string
}

func newProblems() problems { return problems{list: new([]string)} }

// at returns a collector that prefixes its messages with a path element.
func (p problems) at(path string) problems {
	if p.prefix != "" {
		path = p.prefix + " " + path
	}
	return problems{prefix: path, list: p.list}
}

func (p problems) add(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.prefix != "" {
		msg = p.prefix + ": " + msg
	}
	*p.list = append(*p.list, msg)
}

func (p problems) err() error {
	if len(*p.list) == 0 {
		return nil
	}
	out := append([]string(nil), *p.list...)
	return &ValidationError{Problems: out}
}

// sortedKeys returns a map's keys in order, for deterministic messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

package structs

import (
	"fmt"
	"strings"
)

// Sentinel errors that callers across packages branch on with errors.Is.
// Each is a CodedError: its code crosses RPC next to its text, and the
// caller's transport gives back an error that errors.Is matches against the
// sentinel again (see helper/rpcx.RemoteError), however the handler wrapped
// it. Texts are distinct too, so a log line or an HTTP body says which one
// it was; the texts Nomad's clients and tools match on are Nomad's.
var (
	// ErrNotLeader is work that only the leader does, asked of a server
	// that is not the leader or stopped being it meanwhile (raft refused
	// an apply with leadership lost: the write may yet be committed by the
	// next leader). Trying again, through the new leader, will do.
	ErrNotLeader = NewCodedError("NotLeader", "this server is not, or is no longer, the cluster leader")
	// ErrNoLeader is a request this server could neither serve as leader
	// nor forward, because it knows of no leader (an election is under way,
	// or quorum is lost). The request was not applied. The text is Nomad's
	// (lower-cased as its RPC layer sends it), which its clients match on.
	ErrNoLeader = NewCodedError("NoLeader", "no cluster leader")
	// ErrNotFound is an object (job, node, allocation, deployment) that the
	// servers' state does not hold: it never existed, or was garbage
	// collected. Callers wrap it with what was looked for ("job \"web\": ...").
	ErrNotFound = NewCodedError("NotFound", "not found in the cluster state")
	// ErrBadRequest marks an error caused by the caller's input; the HTTP
	// layer maps it to 400. Its text says which field was wrong and why. It
	// is here, not in the server, because the FSM refuses some entries
	// with it too, and the two must be one sentinel.
	ErrBadRequest        = NewCodedError("BadRequest", "bad request")
	ErrNodeNotReady      = NewCodedError("NodeNotReady", "node is not ready")
	ErrNodeSecretDenied  = NewCodedError("NodeSecretDenied", "node secret ID does not match")
	ErrNodeSecretMissing = NewCodedError("NodeSecretMissing", "node secret ID is missing")
	// ErrIndexConflict starts with Nomad's text (its API's
	// RegisterEnforceIndexErrPrefix): Nomad's `job run -check-index` and
	// scripts written for it recognise the refusal by that prefix.
	ErrIndexConflict     = NewCodedError("IndexConflict", "Enforcing job modify index")
	ErrInvalidTransition = NewCodedError("InvalidTransition", "invalid allocation transition")
	ErrTokenMismatch     = NewCodedError("TokenMismatch", "evaluation token does not match")
	// ErrPermissionDenied is Nomad's text exactly: clients and scripts
	// match it, and the HTTP layer answers it with a 403.
	ErrPermissionDenied = NewCodedError("PermissionDenied", "Permission denied")
	// ErrTokenNotFound is a token secret that resolves to no token, or to
	// an expired one (Nomad's text; a 403 over HTTP).
	ErrTokenNotFound = NewCodedError("TokenNotFound", "ACL token not found")
	// ErrACLDisabled answers the ACL endpoints while ACLs are off, in
	// Nomad's words (a 400 over HTTP).
	ErrACLDisabled = NewCodedError("ACLDisabled", "ACL support disabled")
	// ErrACLBootstrapDone refuses a second bootstrap; the servers add the
	// reset index an operator must write to allow another (see
	// ACL.Bootstrap).
	ErrACLBootstrapDone = NewCodedError("ACLBootstrapDone", "ACL bootstrap already done")
	// ErrJobRegistrationDisabled refuses the job writes the scheduler
	// configuration's RejectJobRegistration covers (a 403 over HTTP). As
	// in Nomad, a management token is exempt when ACLs are on; with ACLs
	// off every caller is refused the same way.
	ErrJobRegistrationDisabled = NewCodedError("JobRegistrationDisabled",
		"job registration, dispatch and scale are disabled by the scheduler configuration "+
			"(RejectJobRegistration is true; an operator can allow them again with "+
			"`drover operator scheduler set-config -reject-job-registration=false`)")
)

// CodedError is a sentinel error that keeps its identity across RPC. The
// RPC transport sends ErrorCode next to the text of any error that wraps
// one, and the caller's side matches the code with errors.Is, so callers
// never compare texts. Codes are one namespace across Drover (helper/rpcx
// knows none of them): each must be unique and, once released, stable,
// since servers and clients of different versions compare them.
type CodedError struct {
	code, text string
}

// NewCodedError returns a sentinel with the given code and text. Call it
// only to declare a package-level sentinel: two values with the same code
// match each other across RPC.
func NewCodedError(code, text string) *CodedError {
	return &CodedError{code: code, text: text}
}

// Error returns the sentinel's text.
func (e *CodedError) Error() string { return e.text }

// ErrorCode returns the code that crosses RPC in place of the sentinel.
func (e *CodedError) ErrorCode() string { return e.code }

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

// validateEach validates each block of a list at "name[i]" in the path.
func validateEach[V interface{ validate(problems) }](p problems, name string, vs []V) {
	for i, v := range vs {
		v.validate(p.at(name + "[" + itoa(i) + "]"))
	}
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

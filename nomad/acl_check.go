package nomad

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// The token checks every endpoint a user can reach makes, one call at the
// top of the endpoint, after it forwarded (so the server that answers
// checks, against its own state) and before it reads or writes anything.
// A refusal wraps structs.ErrPermissionDenied ("Permission denied", a 403
// over HTTP) and says what the token lacks; an unknown or expired token
// is structs.ErrTokenNotFound. Writes check before raftApply, which also
// clears the request's AuthToken (see raftlog.Encode).
//
// Reads of one object by ID (an allocation, an evaluation, a deployment)
// cannot know its namespace before they read it: they refuse a token that
// may read no namespace at all up front, and one that may not read the
// object's namespace once they have it. Lists answer only the objects of
// namespaces the token may read.

// aclFor resolves the ACL a request acts with. nil means ACLs are off and
// allows everything. This server's own work (see isOwnCall) and a request
// carrying the server secret act with the management ACL: a server may do
// anything. Everyone else acts with their token (the anonymous policy for
// none).
func (s *Server) aclFor(info structs.RPCInfo) (*acl.ACL, error) {
	if !s.config.ACLEnabled {
		return nil, nil
	}
	token := info.RequestAuthToken()
	if (token == "" && isOwnCall(info)) || s.isServerSecret(token) {
		return acl.ManagementACL, nil
	}
	return s.ResolveToken(token)
}

// permissionDenied is ErrPermissionDenied with what was missing.
func permissionDenied(format string, args ...any) error {
	return fmt.Errorf("%w: %s", structs.ErrPermissionDenied, fmt.Sprintf(format, args...))
}

// capsText names the capabilities of a refusal: "submit-job" or "one of
// submit-job, register-job".
func capsText(caps []string) string {
	if len(caps) == 1 {
		return caps[0]
	}
	return "one of " + strings.Join(caps, ", ")
}

// nsText names a namespace of a refusal; "*" is any namespace.
func nsText(ns string) string {
	if ns == acl.AllNamespaces {
		return "any namespace"
	}
	return fmt.Sprintf("namespace %q", ns)
}

// allowNamespaceOp resolves the request's ACL and refuses unless it allows
// one of caps in namespace ns ("" is the default namespace, "*" any
// namespace). It returns the ACL, for filtering what the endpoint answers.
func (s *Server) allowNamespaceOp(info structs.RPCInfo, ns string, caps ...string) (*acl.ACL, error) {
	a, err := s.aclFor(info)
	if err != nil {
		return nil, err
	}
	ns = nsOrDefault(ns)
	if !a.AllowNamespaceAny(ns, caps...) {
		return nil, permissionDenied("the token needs %s in %s", capsText(caps), nsText(ns))
	}
	return a, nil
}

// allowedIn is the per-object check of reads and lists: whether a allows
// one of caps in the object's namespace.
func allowedIn(a *acl.ACL, ns string, caps ...string) bool {
	return a.AllowNamespaceAny(nsOrDefault(ns), caps...)
}

// objectDenied is the refusal of an object the token may not read.
func objectDenied(what, id, ns string, caps ...string) error {
	return permissionDenied("%s %s is in namespace %q, where the token does not have %s", what, id, ns, capsText(caps))
}

// allowNode refuses unless the request's token may read nodes, or change
// them when write is set.
func (s *Server) allowNode(info structs.RPCInfo, write bool) (*acl.ACL, error) {
	a, err := s.aclFor(info)
	if err != nil {
		return nil, err
	}
	if write && !a.AllowNodeWrite() {
		return nil, permissionDenied(`the token needs node { policy = "write" }`)
	}
	if !write && !a.AllowNodeRead() {
		return nil, permissionDenied(`the token needs node { policy = "read" }`)
	}
	return a, nil
}

// accessorFor is the accessor ID of the token a request carries, for the
// records that say who did what (a node's LastDrain): empty without ACLs,
// for the anonymous token, and for the servers' own calls.
func (s *Server) accessorFor(info structs.RPCInfo) string {
	if !s.config.ACLEnabled {
		return ""
	}
	token := info.RequestAuthToken()
	if token == "" || s.isServerSecret(token) {
		return ""
	}
	tok, err := s.tokenBySecret(s.State(), token)
	if err != nil || tok == nil {
		return ""
	}
	return tok.AccessorID
}

// allowOperator refuses unless the request's token may read the cluster's
// operator settings, or change them when write is set.
func (s *Server) allowOperator(info structs.RPCInfo, write bool) error {
	a, err := s.aclFor(info)
	if err != nil {
		return err
	}
	if write && !a.AllowOperatorWrite() {
		return permissionDenied(`the token needs operator { policy = "write" }`)
	}
	if !write && !a.AllowOperatorRead() {
		return permissionDenied(`the token needs operator { policy = "read" }`)
	}
	return nil
}

// allowManagement refuses unless the request acts with a management token
// (or is a server's own).
func (s *Server) allowManagement(info structs.RPCInfo) error {
	a, err := s.aclFor(info)
	if err != nil {
		return err
	}
	if !a.IsManagement() {
		return permissionDenied("this needs a management token")
	}
	return nil
}

// isExemptManagement reports whether a is a management token's ACL with
// ACLs on: what RejectJobRegistration lets through, as in Nomad. (A nil
// ACL, ACLs off, also allows everything but is not exempt.)
func isExemptManagement(a *acl.ACL) bool {
	return a != nil && a.IsManagement()
}

// readable returns the allocations whose namespace a allows read-job in,
// all of them for a nil or management ACL.
func readable(a *acl.ACL, allocs []*structs.Allocation) []*structs.Allocation {
	if a.IsManagement() {
		return allocs
	}
	out := make([]*structs.Allocation, 0, len(allocs))
	for _, al := range allocs {
		if allowedIn(a, al.Namespace, acl.NamespaceCapabilityReadJob) {
			out = append(out, al)
		}
	}
	return out
}

package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// Token checks for what the agent answers itself. Most endpoints are one
// RPC, and the server that answers it checks the request's token (see
// nomad's acl_check.go), so a direct RPC caller meets the same checks as
// an HTTP user. The endpoints below make no RPC, or act on this agent's
// client, so they check here, first thing:
//
//   - /v1/agent/self and /v1/agent/servers need agent read, /v1/agent/join
//     agent write, /v1/agent/members node read;
//   - /v1/jobs/parse needs parse-job (or read-job, or submit-job) and
//     /v1/validate/job read-job, in the request's or the job's namespace;
//   - /v1/namespaces lists only namespaces the token may use, and
//     /v1/namespace/:name needs one;
//   - the client endpoints need, in the allocation's namespace: read-logs
//     or read-fs (logs), read-fs (ls, stat, cat, readat), alloc-lifecycle
//     (restart, signal), read-job (alloc stats), submit-job (alloc GC);
//     /v1/client/stats needs node read. The agent that runs the
//     allocation checks them, whether the request came to it directly or
//     was forwarded by another agent (after the servers checked it, see
//     Alloc.Locate).
//
// /v1/agent/health, /v1/status/leader, /v1/status/peers and /v1/regions
// need no token, as in Nomad.
//
// A refusal wraps structs.ErrPermissionDenied: a 403 with Nomad's
// "Permission denied", followed by what the token lacks.

// aclFor resolves the request's token on this agent: with its server when
// it runs one (the tokens are in its state), else through its client,
// which asks the servers and caches the answer for acl.token_ttl. nil
// means ACLs are off. A client that cannot reach a server to resolve a
// token it does not remember refuses (fails closed).
func (s *httpAPI) aclFor(r *http.Request) (*acl.ACL, error) {
	secret := authToken(r)
	switch {
	case s.server != nil:
		return s.server.ResolveToken(secret)
	case s.client != nil:
		return s.client.ResolveToken(r.Context(), secret)
	}
	return nil, nil
}

// permissionDenied is structs.ErrPermissionDenied with what was missing.
func permissionDenied(format string, args ...any) error {
	return fmt.Errorf("%w: %s", structs.ErrPermissionDenied, fmt.Sprintf(format, args...))
}

// allowNamespaceOp refuses unless the request's token allows one of caps
// in namespace ns, and returns its ACL.
func (s *httpAPI) allowNamespaceOp(r *http.Request, ns string, caps ...string) (*acl.ACL, error) {
	a, err := s.aclFor(r)
	if err != nil {
		return nil, err
	}
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	if !a.AllowNamespaceAny(ns, caps...) {
		what := caps[0]
		if len(caps) > 1 {
			what = "one of " + strings.Join(caps, ", ")
		}
		return nil, permissionDenied("the token needs %s in namespace %q", what, ns)
	}
	return a, nil
}

// allowAgent refuses unless the token may read the agent, or change it
// when write is set.
func (s *httpAPI) allowAgent(r *http.Request, write bool) error {
	a, err := s.aclFor(r)
	if err != nil {
		return err
	}
	switch {
	case write && !a.AllowAgentWrite():
		return permissionDenied(`the token needs agent { policy = "write" }`)
	case !write && !a.AllowAgentRead():
		return permissionDenied(`the token needs agent { policy = "read" }`)
	}
	return nil
}

// allowNodeRead refuses unless the token may read nodes.
func (s *httpAPI) allowNodeRead(r *http.Request) error {
	a, err := s.aclFor(r)
	if err != nil {
		return err
	}
	if !a.AllowNodeRead() {
		return permissionDenied(`the token needs node { policy = "read" }`)
	}
	return nil
}

// Capabilities of the client endpoints, as Nomad asks for them.
var (
	capsLogs      = []string{acl.NamespaceCapabilityReadLogs, acl.NamespaceCapabilityReadFS}
	capsFS        = []string{acl.NamespaceCapabilityReadFS}
	capsLifecycle = []string{acl.NamespaceCapabilityAllocLifecycle}
	capsAllocRead = []string{acl.NamespaceCapabilityReadJob}
	capsAllocGC   = []string{acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityGCAllocation}
)

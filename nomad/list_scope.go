package nomad

import (
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// A list of namespaced objects (allocations, deployments, evaluations,
// jobs, services) answers the objects in the namespace the request names
// ("*" for all, "" for the default), whose ID starts with the request's
// prefix, and, of those, only the ones in a namespace where the token
// has the list's capability: a token that may read one namespace lists
// that one without an error for the others. listScope is that filter,
// written once so the lists cannot drift apart.
type listScope struct {
	ns, prefix string
	acl        *acl.ACL
	cap        string
}

// listScopeFor checks that the request's token has capability in the
// namespace q names (as every list does first) and returns the list's
// scope.
func listScopeFor(c namespaceChecker, info structs.RPCInfo, q *structs.QueryOptions, capability string) (listScope, error) {
	a, err := c.allowNamespaceOp(info, q.Namespace, capability)
	if err != nil {
		return listScope{}, err
	}
	return listScope{ns: q.Namespace, prefix: q.Prefix, acl: a, cap: capability}, nil
}

// shows is whether an object in namespace ns with this id is listed.
func (s listScope) shows(ns, id string) bool {
	return namespaceMatch(s.ns, ns) && strings.HasPrefix(id, s.prefix) && allowedIn(s.acl, ns, s.cap)
}

// collect returns, in the iterator's order, the objects it yields that
// the scope shows (never nil); where names an object's namespace and ID.
func collect[T any](it memdb.ResultIterator, s listScope, where func(T) (ns, id string)) []T {
	out := []T{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		obj := raw.(T)
		if s.shows(where(obj)) {
			out = append(out, obj)
		}
	}
	return out
}

// namespaceMatch treats "" as the default namespace and "*" as all.
func namespaceMatch(want, have string) bool {
	switch want {
	case "*":
		return true
	case "":
		return have == structs.DefaultNamespace
	}
	return want == have
}

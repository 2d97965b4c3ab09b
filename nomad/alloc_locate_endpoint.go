package nomad

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Locate answers where an allocation runs, for an agent that must send a
// client request (logs, files, signals, stats) to the agent on the
// allocation's node. The token must allow one of the capabilities the
// client request needs in the allocation's namespace, and nothing more: a
// token that may read an allocation's logs needs neither read-job nor
// node read to be sent to them, as in Nomad. The agent that runs the
// allocation checks the token again itself, since anyone can reach it
// directly.
//
// AllocID may be a prefix; it must match exactly one allocation the token
// may act on. A prefix never finds an allocation the token may not act
// on (it is "not found", as if it did not exist), or a token could learn
// other namespaces' allocation IDs a character at a time; only a whole ID
// of such an allocation is refused as such. The answer holds only what
// routing needs: no allocation, job or node object.
func (a *Alloc) Locate(args *structs.AllocLocateRequest, reply *structs.AllocLocateResponse) error {
	if done, err := a.srv.forward("Alloc.Locate", args, args, reply); done {
		return err
	}
	caps := args.Capabilities
	switch n := len(caps); {
	case n == 0:
		// Nothing to check the token against: refuse it as an unknown
		// capability would be, then say what is missing.
		if err := a.srv.allowManagement(args); err != nil {
			return err
		}
		return errBadRequest("Capabilities is empty: name the capabilities the client request needs (read-logs, read-fs, ...)")
	case n > structs.MaxLocateCapabilities:
		return errBadRequest("%d capabilities given; at most %d are allowed", n, structs.MaxLocateCapabilities)
	}
	aclObj, err := a.srv.allowNamespaceOp(args, acl.AllNamespaces, caps...)
	if err != nil {
		return err
	}
	if args.AllocID == "" {
		return errBadRequest("allocation ID is missing")
	}
	st := a.srv.State()
	it, err := st.AllocsByIDPrefix(nil, acl.AllNamespaces, args.AllocID)
	if err != nil {
		return err
	}
	var matches []*structs.Allocation
	denied := ""
	for raw := it.Next(); raw != nil; raw = it.Next() {
		alloc := raw.(*structs.Allocation)
		if !allowedIn(aclObj, alloc.Namespace, caps...) {
			if alloc.ID == args.AllocID {
				denied = alloc.Namespace
			}
			continue
		}
		matches = append(matches, alloc)
	}
	switch len(matches) {
	case 0:
		if denied != "" {
			return permissionDenied("the allocation is in namespace %q, where the token does not have %s", denied, capsText(caps))
		}
		return fmt.Errorf("allocation %q: %w", args.AllocID, structs.ErrNotFound)
	case 1:
	default:
		ids := make([]string, 0, len(matches))
		for _, m := range matches {
			ids = append(ids, m.ID)
		}
		sort.Strings(ids)
		if len(ids) > 10 {
			ids = ids[:10]
		}
		return errBadRequest("allocation prefix %q is ambiguous: it matches %d allocations (%s); give more characters",
			args.AllocID, len(matches), strings.Join(ids, ", "))
	}
	alloc := matches[0]
	reply.AllocID, reply.Namespace, reply.NodeID = alloc.ID, alloc.Namespace, alloc.NodeID
	node, err := st.NodeByID(nil, alloc.NodeID)
	if err != nil {
		return err
	}
	if node != nil {
		reply.NodeHTTPAddr, reply.NodeStatus = node.HTTPAddr, node.Status
	}
	reply.Index = maxIndex(st, state.TableAllocs, state.TableNodes)
	a.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

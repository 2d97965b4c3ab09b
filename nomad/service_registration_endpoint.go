package nomad

import (
	"fmt"
	"sort"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// ServiceRegistration is the catalog of `provider = "nomad"` services.
// Clients write it for their own allocs only (Upsert, Deregister: the
// node's secret on every call, and every registration's alloc placed on
// that node); users read it with read-job in the service's namespace and
// delete from it with submit-job, as in Nomad.
type ServiceRegistration struct {
	srv serviceRegistrationServer
}

// serviceRegistrationServer is what ServiceRegistration uses of the server.
type serviceRegistrationServer interface {
	rpcForwarder
	nodePeerChecker
	namespaceChecker
	blockingQuerier
	stateReader
	raftApplier
	Logger() hclog.Logger
}

var _ serviceRegistrationServer = (*Server)(nil)

// Upsert registers services of the calling node's allocs. A registration
// whose alloc is gone or terminal is skipped: the client learns of the
// alloc's end after the servers, and the apply skips it again in case the
// alloc ends between this check and the entry.
func (s *ServiceRegistration) Upsert(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := nodeOnly(s.srv, "ServiceRegistration.Upsert", args, reply); done {
		return err
	}
	st := s.srv.State()
	node, err := authenticateNode(st, args.NodeID, args.SecretID)
	if err != nil {
		return err
	}
	if len(args.Services) == 0 {
		return errBadRequest("no service registrations to upsert: Services is empty")
	}
	if len(args.Services) > structs.MaxServiceRegistrationsPerRequest {
		return errBadRequest("%d service registrations in one request, more than the %d allowed: send them in smaller batches",
			len(args.Services), structs.MaxServiceRegistrationsPerRequest)
	}
	if node.Status != structs.NodeStatusReady {
		return fmt.Errorf("node %s is %s, heartbeat first: %w", node.ID, node.Status, structs.ErrNodeNotReady)
	}
	regs := make([]*structs.ServiceRegistration, 0, len(args.Services))
	for i, r := range args.Services {
		if err := r.Validate(); err != nil {
			return errBadRequest("Services[%d]: %v", i, err)
		}
		alloc, err := st.AllocByID(nil, r.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil || alloc.TerminalStatus() {
			continue
		}
		if alloc.NodeID != node.ID {
			return errBadRequest("Services[%d]: alloc %s is placed on node %s, not on %s: a node may register only its own allocations' services, so the batch was refused whole",
				i, r.AllocID, alloc.NodeID, node.ID)
		}
		if name, ok := structs.AllocServiceIDs(alloc)[r.ID]; !ok || name != r.ServiceName {
			// Not a service of the alloc's job as the servers hold it:
			// the client may not have seen an in-place update that
			// removed it yet. Dropped, so an alloc never has more
			// registrations than its job has services.
			s.srv.Logger().Debug("dropping a registration that matches no nomad service of its alloc's job",
				"alloc_id", alloc.ID, "id", r.ID, "service", r.ServiceName)
			continue
		}
		c := r.Copy()
		c.NodeID, c.Datacenter, c.JobID, c.Namespace = node.ID, node.Datacenter, alloc.JobID, alloc.Namespace
		c.CreateIndex, c.ModifyIndex = 0, 0
		if existing, err := st.ServiceRegistrationByID(nil, c.ID); err != nil {
			return err
		} else if existing.Equal(c) {
			continue // a client's periodic resend costs no raft entry
		}
		regs = append(regs, c)
	}
	if len(regs) == 0 {
		reply.Index, _ = st.LatestIndex()
		return nil
	}
	req := &structs.ServiceRegistrationUpsertRequest{Services: regs, WriteRequest: args.WriteRequest}
	return applyIndexed(s.srv, structs.ServiceRegistrationUpsertRequestType, req, &reply.Index)
}

// Deregister deletes registrations of the calling node's allocs by ID. An
// ID that is not registered is skipped, so a client may retry a delete
// until it is acknowledged; one of another node's allocs refuses the batch.
func (s *ServiceRegistration) Deregister(args *structs.ServiceRegistrationDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := nodeOnly(s.srv, "ServiceRegistration.Deregister", args, reply); done {
		return err
	}
	st := s.srv.State()
	node, err := authenticateNode(st, args.NodeID, args.SecretID)
	if err != nil {
		return err
	}
	if len(args.IDs) == 0 {
		return errBadRequest("no service registrations to delete: IDs is empty")
	}
	if len(args.IDs) > structs.MaxServiceRegistrationsPerRequest {
		return errBadRequest("%d service registration IDs in one request, more than the %d allowed: send them in smaller batches",
			len(args.IDs), structs.MaxServiceRegistrationsPerRequest)
	}
	ids := make([]string, 0, len(args.IDs))
	for i, id := range args.IDs {
		reg, err := st.ServiceRegistrationByID(nil, id)
		if err != nil {
			return err
		}
		if reg == nil {
			continue
		}
		if reg.NodeID != node.ID {
			return errBadRequest("IDs[%d]: service registration %s belongs to node %s, not %s: a node may delete only its own registrations, so the batch was refused whole",
				i, id, reg.NodeID, node.ID)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		reply.Index, _ = st.LatestIndex()
		return nil
	}
	req := &structs.ServiceRegistrationDeleteRequest{IDs: ids, WriteRequest: args.WriteRequest}
	return applyIndexed(s.srv, structs.ServiceRegistrationDeleteRequestType, req, &reply.Index)
}

// DeleteByID is a user removing one registration (its client registers
// it again while the alloc runs, as in Nomad). It needs submit-job in the
// registration's namespace.
func (s *ServiceRegistration) DeleteByID(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	if done, err := s.srv.forward("ServiceRegistration.DeleteByID", args, args, reply); done {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	if _, err := s.srv.allowNamespaceOp(args, ns, acl.NamespaceCapabilitySubmitJob); err != nil {
		return err
	}
	if args.ID == "" {
		return errBadRequest("the service registration ID is missing")
	}
	st := s.srv.State()
	reg, err := st.ServiceRegistrationByID(nil, args.ID)
	if err != nil {
		return err
	}
	if reg == nil || reg.Namespace != ns || (args.ServiceName != "" && reg.ServiceName != args.ServiceName) {
		return fmt.Errorf("service registration %q of service %q in namespace %q: %w", args.ID, args.ServiceName, ns, structs.ErrNotFound)
	}
	req := &structs.ServiceRegistrationDeleteRequest{IDs: []string{reg.ID}, WriteRequest: args.WriteRequest}
	return applyIndexed(s.srv, structs.ServiceRegistrationDeleteRequestType, req, &reply.Index)
}

// List returns the services of a namespace ("*": of every namespace the
// token may read), each with the union of its instances' tags, grouped
// by namespace, in name order.
func (s *ServiceRegistration) List(args *structs.ServiceRegistrationListRequest, reply *structs.ServiceRegistrationListResponse) error {
	if done, err := s.srv.forward("ServiceRegistration.List", args, args, reply); done {
		return err
	}
	aclObj, err := s.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return s.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		it, err := st.ServiceRegistrations(ws)
		if err != nil {
			return 0, err
		}
		tags := map[string]map[string]map[string]bool{} // namespace -> service -> tag set
		for raw := it.Next(); raw != nil; raw = it.Next() {
			r := raw.(*structs.ServiceRegistration)
			if !namespaceMatch(args.Namespace, r.Namespace) || !allowedIn(aclObj, r.Namespace, acl.NamespaceCapabilityReadJob) {
				continue
			}
			if tags[r.Namespace] == nil {
				tags[r.Namespace] = map[string]map[string]bool{}
			}
			set := tags[r.Namespace][r.ServiceName]
			if set == nil {
				set = map[string]bool{}
				tags[r.Namespace][r.ServiceName] = set
			}
			for _, t := range r.Tags {
				set[t] = true
			}
		}
		reply.Services = []*structs.ServiceRegistrationListStub{}
		for _, ns := range sortedKeys(tags) {
			stub := &structs.ServiceRegistrationListStub{Namespace: ns}
			for _, name := range sortedKeys(tags[ns]) {
				stub.Services = append(stub.Services, &structs.ServiceRegistrationStub{ServiceName: name, Tags: sortedKeys(tags[ns][name])})
			}
			reply.Services = append(reply.Services, stub)
		}
		return maxIndex(st, state.TableServiceRegistrations), nil
	})
}

// GetService returns the registrations of one service in a namespace.
func (s *ServiceRegistration) GetService(args *structs.ServiceRegistrationByNameRequest, reply *structs.ServiceRegistrationByNameResponse) error {
	if done, err := s.srv.forward("ServiceRegistration.GetService", args, args, reply); done {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	if _, err := s.srv.allowNamespaceOp(args, ns, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	if args.ServiceName == "" {
		return errBadRequest("the service name is missing")
	}
	return s.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		regs, err := st.ServiceRegistrationsByName(ws, ns, args.ServiceName)
		if err != nil {
			return 0, err
		}
		reply.Services = regs
		return maxIndex(st, state.TableServiceRegistrations), nil
	})
}

// ForAlloc answers a client rendering an alloc's templates: every
// registration of the alloc's namespace, as a blocking query so the
// client can re-render when they change. The node must be the alloc's;
// the answer is bounded by structs.MaxTemplateServiceRegistrations.
func (s *ServiceRegistration) ForAlloc(args *structs.ServiceRegistrationsForAllocRequest, reply *structs.ServiceRegistrationByNameResponse) error {
	if done, err := nodeOnly(s.srv, "ServiceRegistration.ForAlloc", args, reply); done {
		return err
	}
	node, err := authenticateNode(s.srv.State(), args.NodeID, args.SecretID)
	if err != nil {
		return err
	}
	alloc, err := s.srv.State().AllocByID(nil, args.AllocID)
	if err != nil {
		return err
	}
	if alloc == nil {
		return fmt.Errorf("alloc %q: %w", args.AllocID, structs.ErrNotFound)
	}
	if alloc.NodeID != node.ID {
		return errBadRequest("alloc %s is placed on node %s, not on %s: a node may read services only for its own allocations", alloc.ID, alloc.NodeID, node.ID)
	}
	ns := nsOrDefault(alloc.Namespace)
	return s.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		regs, err := st.ServiceRegistrationsByNamespace(ws, ns)
		if err != nil {
			return 0, err
		}
		if len(regs) > structs.MaxTemplateServiceRegistrations {
			return 0, fmt.Errorf("namespace %q has %d service registrations, more than the %d a template may read", ns, len(regs), structs.MaxTemplateServiceRegistrations)
		}
		reply.Services = regs
		return maxIndex(st, state.TableServiceRegistrations), nil
	})
}

// sortedKeys is m's keys in order, and never nil: a service's tag list is
// [] when it has no tags, as the API has always answered it.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

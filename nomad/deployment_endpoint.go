package nomad

import (
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Deployment reads deployments: read-job in their namespace (lists answer
// only those).
type Deployment struct {
	srv deploymentServer
}

// deploymentServer is what Deployment uses of the server.
type deploymentServer interface {
	rpcForwarder
	namespaceChecker
	blockingQuerier
	stateReader
	Now() time.Time
	raftApplier
}

var _ deploymentServer = (*Server)(nil)

// List returns deployments, newest first, filtered by ID prefix.
func (d *Deployment) List(args *structs.GenericRequest, reply *structs.DeploymentListResponse) error {
	if done, err := d.srv.forward("Deployment.List", args, args, reply); done {
		return err
	}
	scope, err := listScopeFor(d.srv, args, &args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return d.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		it, err := st.Deployments(ws)
		if err != nil {
			return 0, err
		}
		out := collect(it, scope, func(d *structs.Deployment) (string, string) { return d.Namespace, d.ID })
		if reply.Deployments, err = deploymentPager.page(&args.QueryOptions, &reply.QueryMeta, out); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableDeployments), nil
	})
}

// GetDeployment returns one deployment.
func (d *Deployment) GetDeployment(args *structs.DeploymentSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	if done, err := d.srv.forward("Deployment.GetDeployment", args, args, reply); done {
		return err
	}
	aclObj, err := d.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return d.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		dep, err := deploymentIn(ws, st, aclObj, args.DeploymentID, acl.NamespaceCapabilityReadJob)
		if err != nil {
			return 0, err
		}
		reply.Deployment = dep
		return maxIndex(st, state.TableDeployments), nil
	})
}

// deploymentIn reads deployment id (nil when there is none) and refuses
// it when it is in a namespace where a lacks capability: reading one,
// its allocations, or changing it all check the deployment's own
// namespace, since the request names only its ID.
func deploymentIn(ws memdb.WatchSet, st *state.StateStore, a *acl.ACL, id, capability string) (*structs.Deployment, error) {
	dep, err := st.DeploymentByID(ws, id)
	if err != nil {
		return nil, err
	}
	if dep != nil && !allowedIn(a, dep.Namespace, capability) {
		return nil, objectDenied("deployment", dep.ID, dep.Namespace, capability)
	}
	return dep, nil
}

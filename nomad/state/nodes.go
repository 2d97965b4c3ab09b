package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// Drain statuses recorded in a node's LastDrain.
const (
	DrainStatusDraining = "draining"
	DrainStatusComplete = "complete"
	// DrainStatusCanceled is a drain an operator ended before the drainer
	// found nothing left to move.
	DrainStatusCanceled = "canceled"
)

// UpsertNode registers a node or updates its fingerprint. A client
// re-registering does not know what the servers decided about its node,
// so the server-owned fields of an existing record (DrainStrategy,
// SchedulingEligibility, Events, LastDrain, CreateIndex) are kept. A
// node's SecretID never changes: an entry that would change it is refused
// (Node.Register refuses it first; this holds for any entry in the log).
//
// A non-nil event ("Node registered", "Node re-registered") is appended to
// the node's history in the same write, with its CreateIndex set to the
// transaction's index.
func (tx *Txn) UpsertNode(node *structs.Node, event *structs.NodeEvent) error {
	if node == nil || node.ID == "" {
		return fmt.Errorf("state: a node to upsert must have an ID")
	}
	txn, index := tx.txn, tx.index
	existing, err := nodeByIDTxn(txn, nil, node.ID)
	if err != nil {
		return err
	}
	if existing != nil && existing.SecretID != node.SecretID {
		return fmt.Errorf("state: node %s: %w: a registration may not change a node's secret", node.ID, structs.ErrNodeSecretDenied)
	}
	n := node.Copy()
	shareNodeRegistration(n, existing)
	if existing != nil {
		// The server-owned fields are shared with the stored version,
		// as copyNodeForUpdate shares them: stored objects are never
		// changed, and the event list is clipped so that adding an
		// event below cannot write into the stored version's array.
		n.CreateIndex = existing.CreateIndex
		n.DrainStrategy = existing.DrainStrategy
		n.SchedulingEligibility = existing.SchedulingEligibility
		n.Events = slices.Clip(existing.Events)
		n.LastDrain = existing.LastDrain
	} else {
		n.CreateIndex = index
		if n.SchedulingEligibility == "" {
			n.SchedulingEligibility = structs.NodeSchedulingEligible
			if n.DrainStrategy != nil {
				n.SchedulingEligibility = structs.NodeSchedulingIneligible
			}
		}
	}
	n.Drain = n.DrainStrategy != nil
	return storeNode(txn, index, n, event)
}

// UpdateNodeStatus records a heartbeat or a server-side status change
// (down, disconnected). updatedAt is chosen by the leader.
func (tx *Txn) UpdateNodeStatus(nodeID, status string, updatedAt int64, event *structs.NodeEvent) error {
	if !structs.ValidNodeStatus(status) {
		return fmt.Errorf("node %s: status %q is not one of initializing, ready, down, disconnected", structs.ShortID(nodeID), status)
	}
	err := updateNodeTxn(tx.txn, tx.index, nodeID, event, func(n *structs.Node) error {
		n.Status = status
		n.StatusUpdatedAt = updatedAt
		return nil
	})
	if err != nil || status != structs.NodeStatusDown {
		return err
	}
	// A down node's services are unreachable: they go with the status
	// change rather than when the scheduler marks its allocs lost.
	return deleteServiceRegistrationsTxn(tx.txn, tx.index, "node_id", nodeID)
}

// UpdateNodeDrain starts (drain != nil) or ends (drain == nil) a drain. A
// draining node is always ineligible; ending a drain makes it eligible
// again only if markEligible, so an operator can finish a drain and keep
// the node out of scheduling. A drain ended this way is recorded as
// complete; see EndNodeDrain for one an operator cancels.
//
// by is kept in LastDrain: a new drain's accessor and meta replace the
// last one's; an update or end of a drain with an accessor or meta
// replaces that one, without keeps it.
func (tx *Txn) UpdateNodeDrain(nodeID string, drain *structs.DrainStrategy, markEligible bool, updatedAt int64, event *structs.NodeEvent, by DrainOperator) error {
	return tx.updateNodeDrain(nodeID, drain, markEligible, DrainStatusComplete, updatedAt, event, by)
}

// DrainOperator is who changed a drain, kept in the node's LastDrain:
// the accessor ID of the ACL token that asked (empty without ACLs, or for
// the leader's own drainer) and the operator's meta (e.g. `node drain
// -m`'s message).
type DrainOperator struct {
	AccessorID string
	Meta       map[string]string
}

// EndNodeDrain ends a drain and records in LastDrain how it ended:
// DrainStatusComplete when the drainer found nothing left to move,
// DrainStatusCanceled when an operator stopped it. by is kept as
// UpdateNodeDrain keeps it.
func (tx *Txn) EndNodeDrain(nodeID string, markEligible bool, status string, updatedAt int64, event *structs.NodeEvent, by DrainOperator) error {
	return tx.updateNodeDrain(nodeID, nil, markEligible, status, updatedAt, event, by)
}

func (tx *Txn) updateNodeDrain(nodeID string, drain *structs.DrainStrategy, markEligible bool, endStatus string, updatedAt int64, event *structs.NodeEvent, by DrainOperator) error {
	meta := by.Meta
	return updateNodeTxn(tx.txn, tx.index, nodeID, event, func(n *structs.Node) error {
		at := time.Unix(updatedAt, 0).UTC() // updatedAt is Unix seconds, like StatusUpdatedAt
		wasDraining := n.DrainStrategy != nil
		if drain != nil {
			d := *drain
			n.DrainStrategy = &d
			n.SchedulingEligibility = structs.NodeSchedulingIneligible
			if !wasDraining {
				n.LastDrain = &structs.DrainMetadata{StartedAt: at, UpdatedAt: at, Status: DrainStatusDraining, AccessorID: by.AccessorID}
			} else if n.LastDrain != nil {
				n.LastDrain.UpdatedAt = at
			}
		} else {
			n.DrainStrategy = nil
			if markEligible {
				n.SchedulingEligibility = structs.NodeSchedulingEligible
			}
			if wasDraining && n.LastDrain != nil {
				n.LastDrain.UpdatedAt = at
				n.LastDrain.Status = endStatus
			}
		}
		if by.AccessorID != "" && n.LastDrain != nil && (drain != nil || wasDraining) {
			n.LastDrain.AccessorID = by.AccessorID
		}
		if len(meta) > 0 && n.LastDrain != nil {
			kept := make(map[string]string, len(meta))
			for k, v := range meta {
				kept[k] = v
			}
			n.LastDrain.Meta = kept
		}
		n.Drain = n.DrainStrategy != nil
		n.StatusUpdatedAt = updatedAt
		return nil
	})
}

// UpdateNodeEligibility changes whether new work may be placed on the
// node. A draining node cannot be made eligible: the drain would place
// nothing there anyway, and the operator must end the drain instead.
func (tx *Txn) UpdateNodeEligibility(nodeID, eligibility string, updatedAt int64, event *structs.NodeEvent) error {
	switch eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return fmt.Errorf("node %s: eligibility %q is not one of eligible, ineligible", structs.ShortID(nodeID), eligibility)
	}
	return updateNodeTxn(tx.txn, tx.index, nodeID, event, func(n *structs.Node) error {
		if eligibility == structs.NodeSchedulingEligible && n.DrainStrategy != nil {
			return fmt.Errorf("node %s is draining: end the drain before marking it eligible", structs.ShortID(nodeID))
		}
		n.SchedulingEligibility = eligibility
		n.StatusUpdatedAt = updatedAt
		return nil
	})
}

// copyNodeForUpdate copies a stored node for a change of its status,
// eligibility or drain. What a client registered (attributes, meta, links,
// drivers, resources) is shared with the stored version, not copied: a
// status change of every node of a fleet would otherwise copy every
// node's maps, and the event stream keeps recent versions alive. A change
// function may set fields and replace maps and pointers, never write into
// them; DrainStrategy, LastDrain and the event list, which they do write,
// are the copy's own.
func copyNodeForUpdate(existing *structs.Node) *structs.Node {
	n := *existing
	if existing.DrainStrategy != nil {
		d := *existing.DrainStrategy
		n.DrainStrategy = &d
	}
	if existing.LastDrain != nil {
		l := *existing.LastDrain
		n.LastDrain = &l
	}
	n.Events = slices.Clone(existing.Events)
	return &n
}

// updateNodeTxn copies the node, lets change modify the copy, appends
// event and stores it.
func updateNodeTxn(txn *memdb.Txn, index uint64, nodeID string, event *structs.NodeEvent, change func(*structs.Node) error) error {
	existing, err := nodeByIDTxn(txn, nil, nodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("node %s: %w", structs.ShortID(nodeID), structs.ErrNotFound)
	}
	n := copyNodeForUpdate(existing)
	if err := change(n); err != nil {
		return err
	}
	return storeNode(txn, index, n, event)
}

// storeNode appends a copy of event (if any) to n's history, stamped with
// index, and stores n as written at index.
func storeNode(txn *memdb.Txn, index uint64, n *structs.Node, event *structs.NodeEvent) error {
	if event != nil {
		e := event.Copy()
		e.CreateIndex = index
		internNodeEvent(e)
		n.AddEvent(e)
	}
	n.ModifyIndex = index
	return insertNode(txn, index, n)
}

// DeleteNode removes nodes. Every ID must exist, otherwise nothing is
// deleted: a GC batch naming an unknown node is a bug worth seeing.
func (tx *Txn) DeleteNode(nodeIDs []string) error {
	if len(nodeIDs) == 0 {
		return nil
	}
	txn, index := tx.txn, tx.index
	for _, id := range nodeIDs {
		existing, err := nodeByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil {
			return fmt.Errorf("node %s: %w", structs.ShortID(id), structs.ErrNotFound)
		}
		if err := deleteNodeTxn(txn, existing); err != nil {
			return err
		}
		if err := deleteServiceRegistrationsTxn(txn, index, "node_id", id); err != nil {
			return err
		}
	}
	return setIndex(txn, TableNodes, index)
}

func insertNode(txn *memdb.Txn, index uint64, n *structs.Node) error {
	if err := txn.Insert(TableNodes, n); err != nil {
		return fmt.Errorf("state: inserting node %s: %w", n.ID, err)
	}
	return setIndex(txn, TableNodes, index)
}

// NodeByID returns the node, or nil if there is none.
func (s *StateStore) NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error) {
	return nodeByIDTxn(s.readTxn(), ws, id)
}

func nodeByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Node, error) {
	obj, err := firstByKey(txn, ws, func(n *structs.Node) bool { return n.ID == id }, TableNodes, "id", id)
	if err != nil {
		return nil, fmt.Errorf("state: node lookup: %w", err)
	}
	return obj, nil
}

// NodeBySecretID returns the node holding secretID (the one with the
// lowest ID should two hold it), or nil. It scans every node: the table
// keeps no index on secrets (see nodesTableSchema), and the watch fires
// on any node's change.
func (s *StateStore) NodeBySecretID(ws memdb.WatchSet, secretID string) (*structs.Node, error) {
	if secretID == "" {
		return nil, nil
	}
	iter, err := getWatch(s.readTxn(), ws, TableNodes, "id")
	if err != nil {
		return nil, err
	}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if n := raw.(*structs.Node); n.SecretID == secretID {
			return n, nil
		}
	}
	return nil, nil
}

// NodesByIDPrefix iterates over the nodes whose ID starts with prefix.
func (s *StateStore) NodesByIDPrefix(ws memdb.WatchSet, prefix string) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableNodes, "id_prefix", prefix)
}

// NodesByNodePool iterates over the nodes of one pool, by ID. It scans
// every node, as NodeBySecretID does.
func (s *StateStore) NodesByNodePool(ws memdb.WatchSet, pool string) (memdb.ResultIterator, error) {
	iter, err := getWatch(s.readTxn(), ws, TableNodes, "id")
	if err != nil {
		return nil, err
	}
	return memdb.NewFilterIterator(iter, func(raw any) bool { return raw.(*structs.Node).NodePool != pool }), nil
}

// Nodes iterates over every node.
func (s *StateStore) Nodes(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableNodes, "id")
}

// getWatch is txn.Get that also watches the result.
func getWatch(txn *memdb.Txn, ws memdb.WatchSet, table, index string, args ...any) (memdb.ResultIterator, error) {
	iter, err := txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("state: reading %s by %s: %w", table, index, err)
	}
	ws.Add(iter.WatchCh())
	return iter, nil
}

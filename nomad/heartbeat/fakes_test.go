package heartbeat

import (
	"math/rand"
	"sort"
	"sync"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// fakeState is an in-memory StateReader: nodes by ID and their allocs,
// safe for the heartbeater's goroutines and the test's. Like the state
// store, it gives every write the next index and lists nodes in ID order.
type fakeState struct {
	mu     sync.Mutex
	index  uint64
	nodes  map[string]*structs.Node
	allocs map[string][]*structs.Allocation
}

func newFakeState(nodes ...*structs.Node) *fakeState {
	s := &fakeState{nodes: map[string]*structs.Node{}, allocs: map[string][]*structs.Allocation{}}
	for _, n := range nodes {
		s.upsertNode(n)
	}
	return s
}

// upsertNode stores a copy of n at the next index.
func (s *fakeState) upsertNode(n *structs.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index++
	n = n.Copy()
	n.ModifyIndex = s.index
	s.nodes[n.ID] = n
}

func (s *fakeState) Nodes() ([]*structs.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*structs.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *fakeState) NodeByID(nodeID string) (*structs.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[nodeID], nil
}

func (s *fakeState) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs[nodeID], nil
}

// status is the node's status, or "" if there is no such node.
func (s *fakeState) status(nodeID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[nodeID]; n != nil {
		return n.Status
	}
	return ""
}

// apply writes a batch of status changes as the FSM does, in one index:
// a node that changed since the heartbeater read it (its ModifyIndex is
// not the one the batch carries) is skipped and returned.
func (s *fakeState) apply(req *structs.NodeBatchUpdateStatusRequest) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index++
	var skipped []string
	for _, u := range req.Updates {
		n := s.nodes[u.NodeID]
		if want, ok := req.NodeModifyIndexes[u.NodeID]; n == nil || !ok || n.ModifyIndex != want {
			skipped = append(skipped, u.NodeID)
			continue
		}
		n = n.Copy()
		n.Status, n.StatusUpdatedAt, n.ModifyIndex = u.Status, u.UpdatedAt, s.index
		s.nodes[n.ID] = n
	}
	return skipped
}

// testNode is a ready node.
func testNode(id string) *structs.Node {
	return &structs.Node{ID: id, Name: id, SecretID: structs.GenerateUUID(), Datacenter: "dc1", Status: structs.NodeStatusReady}
}

// testConfig is the tests' tuning: a 10s TTL for a small fleet, 5s of
// grace, a 300s failover TTL and 1,000 nodes marked a second, on clock
// with a source seeded with seed.
func testConfig(clock clock.Clock, seed int64) Config {
	return Config{
		MinHeartbeatTTL: 10 * time.Second, MaxHeartbeatsPerSecond: 50, HeartbeatGrace: 5 * time.Second,
		FailoverHeartbeatTTL: 300 * time.Second, MaxNodeDownPerSecond: 1000,
		Clock: clock, Rand: rand.New(rand.NewSource(seed)),
	}
}

// testEpoch is where the tests' fake clocks start.
var testEpoch = time.Unix(1_800_000_000, 0)

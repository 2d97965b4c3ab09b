package planner_test

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// TestPlanApply_ConcurrentConflictingPlansNeverOvercommit is a property
// test: many workers submit plans that fight over the same nodes' CPU,
// memory and static ports, stop each other's allocs, while clients report
// allocs complete. After every committed raft entry, every node the entry
// touched must still fit (structs.AllocsFit: resources and ports, counting
// stopped-but-running allocs), whatever the applier options.
func TestPlanApply_ConcurrentConflictingPlansNeverOvercommit(t *testing.T) {
	t.Parallel()
	variants := []struct {
		name string
		opts planner.Config
	}{
		{"serial", planner.Config{DisablePipelining: true}},
		{"pipelined", planner.Config{Workers: 4}},
		{"pipelined+group-commit", planner.Config{Workers: 4, GroupCommit: true, MaxBatch: 8}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			stressPlanApplier(t, v.opts)
		})
	}
}

func stressPlanApplier(t *testing.T, opts planner.Config) {
	h := newPlanHarness(t)
	job := h.job()
	var nodes []*structs.Node
	for i := 0; i < 4; i++ {
		nodes = append(nodes, h.node(nil))
	}
	var vmu sync.Mutex // violations; AfterApply runs on the applier's goroutine
	var violations []string
	h.raft.AfterApply = func(index uint64, req *structs.ApplyPlanResultsRequest) {
		vmu.Lock()
		defer vmu.Unlock()
		touched := map[string]bool{}
		for _, a := range req.AllocsUpdated {
			touched[a.NodeID] = true
		}
		for _, n := range nodes {
			if !touched[n.ID] {
				continue
			}
			allocs, err := h.store.AllocsByNode(nil, n.ID)
			if err != nil {
				violations = append(violations, err.Error())
				continue
			}
			if fit, dim, _, _ := structs.AllocsFit(n, allocs, nil); !fit {
				violations = append(violations, fmt.Sprintf("index %d: node %s overcommitted: %s", index, n.ID, dim))
			}
		}
	}
	h.start(opts, true)

	const submitters, plansEach = 8, 30
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, refused := 0, 0
	for g := 0; g < submitters; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < plansEach; i++ {
				p := testPlan(job)
				for k := 0; k < 1+rng.Intn(3); k++ {
					var ports []int
					if rng.Intn(2) == 0 {
						ports = []int{8000 + rng.Intn(5)}
					}
					p.AppendAlloc(testAllocOn(job, nodes[rng.Intn(len(nodes))], int64(200+rng.Intn(1300)), int64(200+rng.Intn(2800)), ports...))
				}
				if rng.Intn(3) == 0 {
					// Stop someone's alloc: it keeps its resources until
					// its client reports it complete.
					snap, _ := h.store.Snapshot()
					allocs, _ := snap.AllocsByNode(nil, nodes[rng.Intn(len(nodes))].ID)
					if len(allocs) > 0 {
						if a := allocs[rng.Intn(len(allocs))]; !a.TerminalStatus() {
							p.AppendStoppedAlloc(a, "stress", "", "")
						}
					}
				}
				res, err := h.submit(p)
				if err != nil {
					t.Errorf("submit: %v", err)
					return
				}
				mu.Lock()
				if len(res.RejectedNodes) > 0 {
					refused++
				} else {
					accepted++
				}
				mu.Unlock()
			}
		}(int64(g))
	}

	// Clients finish some of their work, freeing capacity.
	stopClients := make(chan struct{})
	clientsDone := make(chan struct{})
	go func() {
		defer close(clientsDone)
		rng := rand.New(rand.NewSource(99))
		for {
			select {
			case <-stopClients:
				return
			default:
			}
			snap, _ := h.store.Snapshot()
			allocs, _ := snap.AllocsByNode(nil, nodes[rng.Intn(len(nodes))].ID)
			var live []*structs.Allocation
			for _, a := range allocs {
				if !a.ClientTerminalStatus() {
					live = append(live, a)
				}
			}
			if len(live) == 0 {
				continue
			}
			a := live[rng.Intn(len(live))]
			status := structs.AllocClientStatusRunning
			if a.ServerTerminalStatus() || rng.Intn(4) == 0 {
				status = structs.AllocClientStatusComplete
			}
			if err := h.raft.TryWrite(func(i uint64) error {
				return h.store.Write(i, func(tx *state.Txn) error {
					return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: a.ID, ClientStatus: status}})
				})
			}); err != nil {
				t.Errorf("client update: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	close(stopClients)
	<-clientsDone

	vmu.Lock()
	defer vmu.Unlock()
	for _, v := range violations {
		t.Error(v)
	}
	for _, n := range nodes {
		allocs, _ := h.store.AllocsByNode(nil, n.ID)
		if fit, dim, _, _ := structs.AllocsFit(n, allocs, nil); !fit {
			t.Errorf("final state: node %s overcommitted: %s", n.ID, dim)
		}
	}
	if accepted == 0 || refused == 0 {
		t.Errorf("accepted %d, refused %d: the test did not create conflicts", accepted, refused)
	}
	t.Logf("accepted %d plans, refused %d, %d raft entries", accepted, refused, h.raft.EntryCount())
}

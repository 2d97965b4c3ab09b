package agent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// Held blocking queries must never starve the rest of the API: with more of
// them waiting than a multiplexed session has streams, ordinary reads are
// answered, a job is placed and runs (the workers still dequeue), the
// agent's own node stays ready, and when the HTTP clients go away the
// server stops waiting for them.
func TestHeldBlockingQueriesDoNotStarveTheAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 1,100 HTTP connections")
	}
	a := NewTestAgent(t, nil)
	srv := a.server.(nomadServer).Server

	resp, _ := call(t, http.MethodGet, a.URL+"/v1/jobs", nil)
	idx := index(t, resp)

	// 1,100 held queries (more than the 1,024 streams a session may
	// have), from 12 loopback addresses so that no one client passes its
	// per-client limits.
	const held, sources = 1100, 12
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*http.Client, sources)
	for i := range clients {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: local}).DialContext, MaxIdleConnsPerHost: -1}
		defer tr.CloseIdleConnections()
		clients[i] = &http.Client{Transport: tr}
	}
	var wg sync.WaitGroup
	url := fmt.Sprintf("%s/v1/jobs?index=%d&wait=5m", a.URL, idx+1_000_000)
	for i := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if resp, err := clients[i%sources].Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	// (>=: the agent's own client holds one for its assignment.) Slow
	// under the race detector: allow it a minute.
	wait.Until(t, time.Minute, "every query to be waiting on the server", func() bool { return srv.BlockingQueries() >= held })

	// An ordinary read answers at once.
	quick, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	req, _ := http.NewRequestWithContext(quick, http.MethodGet, a.URL+"/v1/agent/members", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("an ordinary read behind %d held blocking queries: %v", held, err)
	}
	r.Body.Close()

	// Work is still scheduled and run.
	reg := registerJob(t, a, mockJob("busy", 1))
	waitUntil(t, "the job's alloc to run", func() bool {
		var allocs []*api.AllocationListStub
		callOK(t, http.MethodGet, a.URL+"/v1/job/busy/allocations", nil, &allocs)
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	if reg.EvalID == "" {
		t.Fatal("no eval for the job")
	}
	var node api.Node
	callOK(t, http.MethodGet, a.URL+"/v1/node/"+a.NodeID(), nil, &node)
	if node.Status != structs.NodeStatusReady {
		t.Fatalf("the agent's own node is %s behind held blocking queries", node.Status)
	}

	// The HTTP clients go away: the server stops waiting for them.
	cancel()
	wg.Wait()
	wait.Until(t, time.Minute, "the server to drop the abandoned queries", func() bool { return srv.BlockingQueries() <= 1 }, wait.Every(50*time.Millisecond))
}

package feasible

import (
	"testing"
)

func TestSelectPlacesEveryAllocationOfASimpleJob(t *testing.T) {
	nodes := mockNodes(10, nil)
	f := newFixture(1, nodes)
	job := simpleJob(10)
	s := f.stack(job)
	for i := 0; i < 10; i++ {
		if option := f.place(t, s, job, job.TaskGroups[0], i, nil); option == nil {
			t.Fatalf("placement %d: no node, metrics %+v", i, f.ctx.Metrics())
		}
	}
}

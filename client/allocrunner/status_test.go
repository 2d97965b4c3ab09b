package allocrunner

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestClientStatus(t *testing.T) {
	run := &structs.TaskState{State: structs.TaskStateRunning}
	pend := &structs.TaskState{State: structs.TaskStatePending}
	ok := &structs.TaskState{State: structs.TaskStateDead}
	bad := &structs.TaskState{State: structs.TaskStateDead, Failed: true}
	cases := []struct {
		name   string
		states map[string]*structs.TaskState
		prev   string
		want   string
	}{
		{"nothing started is pending", map[string]*structs.TaskState{"a": pend}, "", structs.AllocClientStatusPending},
		{"one running is running", map[string]*structs.TaskState{"a": run, "b": pend}, "", structs.AllocClientStatusRunning},
		{"all dead and successful is complete", map[string]*structs.TaskState{"a": ok, "b": ok}, structs.AllocClientStatusRunning, structs.AllocClientStatusComplete},
		{"a failed task fails the alloc once all are dead", map[string]*structs.TaskState{"a": ok, "b": bad}, structs.AllocClientStatusRunning, structs.AllocClientStatusFailed},
		{"a failed task with a live sibling is not yet failed", map[string]*structs.TaskState{"a": run, "b": bad}, structs.AllocClientStatusRunning, structs.AllocClientStatusRunning},
		{"a restarting task keeps a running alloc running", map[string]*structs.TaskState{"a": pend}, structs.AllocClientStatusRunning, structs.AllocClientStatusRunning},
		{"a terminal status is final", map[string]*structs.TaskState{"a": run}, structs.AllocClientStatusComplete, structs.AllocClientStatusComplete},
		{"a reconnecting alloc reports its real status", map[string]*structs.TaskState{"a": run}, structs.AllocClientStatusUnknown, structs.AllocClientStatusRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := clientStatus(c.states, c.prev)
			if got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			if c.prev != "" && c.prev != got {
				if err := structs.ValidateClientTransition(structs.ActorClient, c.prev, got); err != nil {
					t.Fatalf("derived an invalid transition: %v", err)
				}
			}
		})
	}
}

package structs

import "testing"

func TestClientStatus(t *testing.T) {
	run := &TaskState{State: TaskStateRunning}
	pend := &TaskState{State: TaskStatePending}
	ok := &TaskState{State: TaskStateDead}
	bad := &TaskState{State: TaskStateDead, Failed: true}
	cases := []struct {
		name   string
		states map[string]*TaskState
		prev   string
		want   string
	}{
		{"nothing started is pending", map[string]*TaskState{"a": pend}, "", AllocClientStatusPending},
		{"one running is running", map[string]*TaskState{"a": run, "b": pend}, "", AllocClientStatusRunning},
		{"all dead and successful is complete", map[string]*TaskState{"a": ok, "b": ok}, AllocClientStatusRunning, AllocClientStatusComplete},
		{"a failed task fails the alloc once all are dead", map[string]*TaskState{"a": ok, "b": bad}, AllocClientStatusRunning, AllocClientStatusFailed},
		{"a failed task with a live sibling is not yet failed", map[string]*TaskState{"a": run, "b": bad}, AllocClientStatusRunning, AllocClientStatusRunning},
		{"a restarting task keeps a running alloc running", map[string]*TaskState{"a": pend}, AllocClientStatusRunning, AllocClientStatusRunning},
		{"a terminal status is final", map[string]*TaskState{"a": run}, AllocClientStatusComplete, AllocClientStatusComplete},
		{"a reconnecting alloc reports its real status", map[string]*TaskState{"a": run}, AllocClientStatusUnknown, AllocClientStatusRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := ClientStatusFromTasks(c.states, c.prev)
			if got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			if c.prev != "" && c.prev != got {
				if err := ValidateClientTransition(ActorClient, c.prev, got); err != nil {
					t.Fatalf("derived an invalid transition: %v", err)
				}
			}
		})
	}
}

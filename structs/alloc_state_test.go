package structs

import (
	"errors"
	"testing"
	"time"
)

func TestValidateClientTransition(t *testing.T) {
	cases := []struct {
		name     string
		actor    Actor
		from, to string
		ok       bool
	}{
		{"a client moves a pending alloc to running", ActorClient, AllocClientStatusPending, AllocClientStatusRunning, true},
		{"a client completes a running alloc", ActorClient, AllocClientStatusRunning, AllocClientStatusComplete, true},
		{"a client fails a pending alloc", ActorClient, AllocClientStatusPending, AllocClientStatusFailed, true},
		{"a client reports the same status again", ActorClient, AllocClientStatusRunning, AllocClientStatusRunning, true},
		{"a client reports a reconnected alloc running", ActorClient, AllocClientStatusUnknown, AllocClientStatusRunning, true},
		{"a client reports a reconnected alloc still pending", ActorClient, AllocClientStatusUnknown, AllocClientStatusPending, true},
		{"a client may not move running back to pending", ActorClient, AllocClientStatusRunning, AllocClientStatusPending, false},
		{"a client may not mark an alloc lost", ActorClient, AllocClientStatusRunning, AllocClientStatusLost, false},
		{"a client may not mark an alloc unknown", ActorClient, AllocClientStatusRunning, AllocClientStatusUnknown, false},
		{"a complete alloc never runs again", ActorClient, AllocClientStatusComplete, AllocClientStatusRunning, false},
		{"a lost alloc never runs again", ActorClient, AllocClientStatusLost, AllocClientStatusRunning, false},
		{"a failed alloc cannot become complete", ActorClient, AllocClientStatusFailed, AllocClientStatusComplete, false},
		{"a server marks a running alloc lost", ActorServer, AllocClientStatusRunning, AllocClientStatusLost, true},
		{"a server marks a pending alloc unknown", ActorServer, AllocClientStatusPending, AllocClientStatusUnknown, true},
		{"a server expires an unknown alloc to lost", ActorServer, AllocClientStatusUnknown, AllocClientStatusLost, true},
		{"a server may not mark an alloc running", ActorServer, AllocClientStatusPending, AllocClientStatusRunning, false},
		{"a server may not revive a lost alloc", ActorServer, AllocClientStatusLost, AllocClientStatusUnknown, false},
		{"a new alloc starts pending", ActorServer, "", AllocClientStatusPending, true},
		{"a new alloc may not start running", ActorServer, "", AllocClientStatusRunning, false},
		{"an unknown status word is refused", ActorClient, AllocClientStatusPending, "exploded", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateClientTransition(tc.actor, tc.from, tc.to)
			if tc.ok && err != nil {
				t.Fatalf("want allowed, got %v", err)
			}
			if !tc.ok {
				if err == nil {
					t.Fatal("want refused, got allowed")
				}
				if !errors.Is(err, ErrInvalidTransition) {
					t.Fatalf("want ErrInvalidTransition, got %v", err)
				}
			}
		})
	}
}

func TestValidateDesiredTransition(t *testing.T) {
	if err := ValidateDesiredTransition(AllocDesiredStatusRun, AllocDesiredStatusStop); err != nil {
		t.Fatalf("run -> stop must be allowed: %v", err)
	}
	if err := ValidateDesiredTransition(AllocDesiredStatusStop, AllocDesiredStatusEvict); err != nil {
		t.Fatalf("stop -> evict must be allowed: %v", err)
	}
	for _, from := range []string{AllocDesiredStatusStop, AllocDesiredStatusEvict} {
		if err := ValidateDesiredTransition(from, AllocDesiredStatusRun); err == nil {
			t.Fatalf("%s -> run must be refused", from)
		}
	}
	if err := ValidateDesiredTransition(AllocDesiredStatusRun, "pause"); err == nil {
		t.Fatal("an unknown desired status must be refused")
	}
}

func TestHoldsResourcesUntilClientTerminal(t *testing.T) {
	cases := []struct {
		desired, client string
		holds           bool
	}{
		{AllocDesiredStatusRun, AllocClientStatusPending, true},
		{AllocDesiredStatusRun, AllocClientStatusRunning, true},
		{AllocDesiredStatusStop, AllocClientStatusRunning, true},
		{AllocDesiredStatusStop, AllocClientStatusPending, true},
		{AllocDesiredStatusStop, AllocClientStatusUnknown, true},
		{AllocDesiredStatusEvict, AllocClientStatusRunning, true},
		{AllocDesiredStatusStop, AllocClientStatusComplete, false},
		{AllocDesiredStatusStop, AllocClientStatusFailed, false},
		{AllocDesiredStatusStop, AllocClientStatusLost, false},
		{AllocDesiredStatusRun, AllocClientStatusComplete, false},
	}
	for _, tc := range cases {
		a := &Allocation{DesiredStatus: tc.desired, ClientStatus: tc.client}
		if got := a.HoldsResources(); got != tc.holds {
			t.Errorf("desired %s client %s: HoldsResources = %v, want %v", tc.desired, tc.client, got, tc.holds)
		}
	}
}

func TestNeedsToReconnectFollowsTheLastClientStatusEntry(t *testing.T) {
	now := time.Unix(1000, 0)
	a := &Allocation{}
	if a.NeedsToReconnect() {
		t.Fatal("an alloc with no history does not need to reconnect")
	}
	a.AppendState(AllocStateFieldClientStatus, AllocClientStatusUnknown, now)
	if !a.NeedsToReconnect() {
		t.Fatal("an alloc whose last entry is unknown needs to reconnect")
	}
	if at, ok := a.DisconnectedAt(); !ok || !at.Equal(now) {
		t.Fatalf("DisconnectedAt = %v, %v; want %v", at, ok, now)
	}
	a.AppendState(AllocStateFieldClientStatus, AllocClientStatusRunning, now.Add(time.Minute))
	if a.NeedsToReconnect() {
		t.Fatal("an alloc reconnected after its disconnect must not reconnect again")
	}
}

func TestApplyClientUpdateTakesOnlyClientFields(t *testing.T) {
	existing := &Allocation{ID: "a1", DesiredStatus: AllocDesiredStatusStop, ClientStatus: AllocClientStatusRunning, NodeID: "n1"}
	update := &Allocation{ID: "a1", DesiredStatus: AllocDesiredStatusRun, NodeID: "evil", ClientStatus: AllocClientStatusComplete,
		TaskStates: map[string]*TaskState{"web": {State: TaskStateDead}}}
	got, err := existing.ApplyClientUpdate(update)
	if err != nil {
		t.Fatal(err)
	}
	if got.DesiredStatus != AllocDesiredStatusStop || got.NodeID != "n1" {
		t.Fatalf("client changed server fields: desired %q node %q", got.DesiredStatus, got.NodeID)
	}
	if got.ClientStatus != AllocClientStatusComplete || got.TaskStates["web"].State != TaskStateDead {
		t.Fatalf("client fields not applied: %+v", got)
	}
	if existing.ClientStatus != AllocClientStatusRunning {
		t.Fatal("ApplyClientUpdate must not modify the stored alloc")
	}
	if _, err := got.ApplyClientUpdate(&Allocation{ClientStatus: AllocClientStatusRunning}); err == nil {
		t.Fatal("a complete alloc must not be reported running again")
	}
}

func TestValidateServerUpdate(t *testing.T) {
	existing := &Allocation{ID: "a", DesiredStatus: AllocDesiredStatusStop, ClientStatus: AllocClientStatusRunning}
	if err := ValidateServerUpdate(existing, &Allocation{DesiredStatus: AllocDesiredStatusRun}); err == nil {
		t.Fatal("a plan must not move desired status back to run")
	}
	if err := ValidateServerUpdate(existing, &Allocation{DesiredStatus: AllocDesiredStatusStop, ClientStatus: AllocClientStatusLost}); err != nil {
		t.Fatalf("marking lost must be allowed: %v", err)
	}
	if err := ValidateServerUpdate(existing, &Allocation{DesiredStatus: AllocDesiredStatusStop, ClientStatus: AllocClientStatusPending}); err != nil {
		t.Fatalf("a stale client status carried by a plan is not a server change: %v", err)
	}
	done := &Allocation{ID: "b", DesiredStatus: AllocDesiredStatusStop, ClientStatus: AllocClientStatusComplete}
	if err := ValidateServerUpdate(done, &Allocation{DesiredStatus: AllocDesiredStatusStop, ClientStatus: AllocClientStatusLost}); err == nil {
		t.Fatal("a server must not mark a complete alloc lost")
	}
}

// A client's health report made before a promotion carries Canary = true;
// applying it must not make the promoted alloc a canary again, and a
// client cannot make an alloc a canary at all.
func TestApplyClientUpdateKeepsTheServersCanaryFlag(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name         string
		stored       *AllocDeploymentStatus
		reportCanary bool
		wantCanary   bool
	}{
		{"promoted stays promoted", &AllocDeploymentStatus{Canary: false}, true, false},
		{"canary stays canary", &AllocDeploymentStatus{Canary: true}, false, true},
		{"no status, client claims canary", nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			existing := &Allocation{ID: "a1", ClientStatus: AllocClientStatusRunning, DeploymentStatus: tc.stored}
			at := time.Unix(100, 0)
			got, err := existing.ApplyClientUpdate(&Allocation{ID: "a1", ClientStatus: AllocClientStatusRunning,
				DeploymentStatus: &AllocDeploymentStatus{Healthy: &yes, Timestamp: at, Canary: tc.reportCanary}})
			if err != nil {
				t.Fatal(err)
			}
			ds := got.DeploymentStatus
			if ds == nil || ds.Healthy == nil || !*ds.Healthy || !ds.Timestamp.Equal(at) {
				t.Fatalf("client's health not applied: %+v", ds)
			}
			if ds.Canary != tc.wantCanary {
				t.Fatalf("Canary = %v, want %v (the servers' flag)", ds.Canary, tc.wantCanary)
			}
		})
	}
}

package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

func TestDBsRoundTripAndDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client", "state.db")
	bdb, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, db := range map[string]DB{"bolt": bdb, "mem": NewMemDB()} {
		t.Run(name, func(t *testing.T) {
			a := &structs.Allocation{ID: "a1", AllocModifyIndex: 7, Job: &structs.Job{ID: "j", TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{{Name: "web", Config: map[string]any{"args": []string{"x"}}}}}}}}
			if err := db.PutAlloc(a); err != nil {
				t.Fatal(err)
			}
			ts := &structs.TaskState{State: structs.TaskStateRunning, Restarts: 2, StartedAt: time.Unix(100, 0).UTC()}
			if err := db.PutTaskState("a1", "web", ts); err != nil {
				t.Fatal(err)
			}
			h := &drivers.TaskHandle{Driver: "raw_exec", TaskID: "a1/web/1", DriverState: []byte(`{"Pid":42}`), Config: &drivers.TaskConfig{ID: "a1/web/1"}}
			if err := db.PutTaskHandle("a1", "web", h); err != nil {
				t.Fatal(err)
			}
			allocs, err := db.GetAllocs()
			if err != nil || len(allocs) != 1 || allocs[0].AllocModifyIndex != 7 || allocs[0].Job.TaskGroups[0].Tasks[0].Name != "web" {
				t.Fatalf("allocs %+v %v", allocs, err)
			}
			got, _ := db.GetTaskState("a1", "web")
			if got == nil || got.Restarts != 2 || !got.StartedAt.Equal(ts.StartedAt) {
				t.Fatalf("state %+v", got)
			}
			gh, _ := db.GetTaskHandle("a1", "web")
			if gh == nil || string(gh.DriverState) != `{"Pid":42}` || gh.Config.ID != "a1/web/1" {
				t.Fatalf("handle %+v", gh)
			}
			if err := db.DeleteTaskHandle("a1", "web"); err != nil {
				t.Fatal(err)
			}
			if gh, _ := db.GetTaskHandle("a1", "web"); gh != nil {
				t.Fatal("handle not deleted")
			}
			if err := db.DeleteAlloc("a1"); err != nil {
				t.Fatal(err)
			}
			if allocs, _ := db.GetAllocs(); len(allocs) != 0 {
				t.Fatal("alloc not deleted")
			}
			if s, _ := db.GetTaskState("a1", "web"); s != nil {
				t.Fatal("task state not deleted with its alloc")
			}
		})
	}
	bdb.Close()
	// Reopening finds the file (and an absent alloc stays absent).
	bdb, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.DeleteAlloc("nope"); err != nil {
		t.Fatal(err)
	}
}

// The finding: a corrupt state.db gave a raw bolt panic or SIGBUS naming no
// file. Open must refuse it naming the file and what to do.
func TestOpenRefusesACorruptStateFileNamingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a bolt file ", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path)
	if err == nil {
		db.Close()
		t.Fatal("a corrupt state file must be refused")
	}
	for _, want := range []string{path, "Remove it"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q should mention %q", err, want)
		}
	}
}

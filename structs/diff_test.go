package structs

import (
	"strings"
	"testing"
)

func findField(fs []*FieldDiff, name string) *FieldDiff {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func TestJobDiffOfANewJobIsAdded(t *testing.T) {
	j := testJob()
	j.Canonicalize()
	d, err := (*Job)(nil).Diff(j, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != DiffTypeAdded || len(d.TaskGroups) != 1 || d.TaskGroups[0].Type != DiffTypeAdded {
		t.Fatalf("new job diff wrong: %+v", d)
	}
	if f := findField(d.TaskGroups[0].Fields, "Count"); f == nil || f.Type != DiffTypeAdded || f.New != "2" {
		t.Fatalf("count field wrong: %+v", f)
	}
}

func TestJobDiffShowsEditedFieldsOnly(t *testing.T) {
	old := testJob()
	old.Canonicalize()
	old.Version, old.JobModifyIndex = 3, 40
	newer := old.Copy()
	newer.Version, newer.JobModifyIndex = 0, 0
	d, err := old.Diff(newer, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != DiffTypeNone {
		t.Fatalf("an identical job (but for server fields) must diff as None, got %s: %+v", d.Type, d)
	}

	newer.TaskGroups[0].Count = 3
	newer.TaskGroups[0].Tasks[0].Config["command"] = "/bin/false"
	newer.TaskGroups[0].Tasks = append(newer.TaskGroups[0].Tasks, &Task{Name: "sidecar", Driver: "mock", Resources: &Resources{CPU: 10, MemoryMB: 10}})
	d, _ = old.Diff(newer, false)
	if d.Type != DiffTypeEdited {
		t.Fatalf("want Edited, got %s", d.Type)
	}
	tg := d.TaskGroups[0]
	if f := findField(tg.Fields, "Count"); f == nil || f.Old != "2" || f.New != "3" {
		t.Fatalf("count diff wrong: %+v", f)
	}
	var server, sidecar *TaskDiff
	for _, td := range tg.Tasks {
		switch td.Name {
		case "server":
			server = td
		case "sidecar":
			sidecar = td
		}
	}
	if sidecar == nil || sidecar.Type != DiffTypeAdded {
		t.Fatalf("added task not reported: %+v", sidecar)
	}
	if server == nil || server.Type != DiffTypeEdited {
		t.Fatalf("edited task not reported: %+v", server)
	}
	var cfg *ObjectDiff
	for _, o := range server.Objects {
		if o.Name == "Config" {
			cfg = o
		}
	}
	if cfg == nil || findField(cfg.Fields, "command") == nil || findField(cfg.Fields, "command").New != "/bin/false" {
		t.Fatalf("config diff wrong: %+v", cfg)
	}
}

func TestJobDiffOmitsEmptyBlocks(t *testing.T) {
	j := testJob()
	j.Type = JobTypeBatch
	j.Update = UpdateStrategy{}
	j.Canonicalize()
	j.Update = UpdateStrategy{} // a batch job has no update strategy
	d, err := (*Job)(nil).Diff(j, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range d.Objects {
		if o.Name == "Update" {
			t.Fatalf("an empty update block is shown: %+v", o)
		}
	}
	if len(d.Objects) == 0 {
		t.Fatal("the new job's non-empty blocks are missing")
	}
}

// A group or task on one side only is added or deleted under its own
// name; groups and tasks come in name order; jobs of different IDs do not
// diff.
func TestJobDiffNamesAddedAndDeletedGroupsAndTasks(t *testing.T) {
	old := testJob()
	old.Canonicalize()
	newer := old.Copy()
	gone := old.TaskGroups[0].Copy()
	gone.Name = "a-gone"
	old.TaskGroups = append(old.TaskGroups, gone)
	added := old.TaskGroups[0].Copy()
	added.Name = "z-added"
	newer.TaskGroups = append(newer.TaskGroups, added)
	doomed := old.TaskGroups[0].Tasks[0].Copy()
	doomed.Name = "a-doomed"
	old.TaskGroups[0].Tasks = append(old.TaskGroups[0].Tasks, doomed)

	d, err := old.Diff(newer, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != DiffTypeEdited || d.ID != old.ID {
		t.Fatalf("job diff %s %q, want Edited %q", d.Type, d.ID, old.ID)
	}
	var got []string
	for _, tg := range d.TaskGroups {
		got = append(got, tg.Name+":"+tg.Type)
	}
	want := "a-gone:Deleted " + old.TaskGroups[0].Name + ":Edited z-added:Added"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("groups %q, want %q", s, want)
	}
	kept := d.TaskGroups[1]
	if len(kept.Tasks) != 2 || kept.Tasks[0].Name != "a-doomed" || kept.Tasks[0].Type != DiffTypeDeleted || kept.Tasks[1].Type != DiffTypeNone {
		t.Fatalf("tasks of the kept group: %+v %+v", kept.Tasks[0], kept.Tasks[1])
	}

	other := newer.Copy()
	other.ID = "other"
	if _, err := old.Diff(other, false); err == nil {
		t.Fatal("jobs with different IDs diffed")
	}
	if _, err := (*Job)(nil).Diff(nil, false); err == nil {
		t.Fatal("two absent jobs diffed")
	}
}

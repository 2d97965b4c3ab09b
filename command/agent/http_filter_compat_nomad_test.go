package agent

import (
	"slices"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
)

// TestNomadClientFilters sends QueryOptions.Filter with Nomad's client,
// alone and with PerPage/NextToken, to the job and allocation lists.
func TestNomadClientFilters(t *testing.T) {
	a := serverAgent(t)
	registerNode(t, a, nil)
	c := nomadClient(t, a)
	for _, id := range []string{"web-a", "web-b", "api"} {
		job := mockServiceJob(id, id)
		if id == "api" {
			job.Priority = ptr(70)
		}
		if _, _, err := c.Jobs().Register(job, nil); err != nil {
			t.Fatalf("register %s: %v", id, err)
		}
	}
	var all []*nomadapi.AllocationListStub
	waitUntil(t, "three allocations", func() bool {
		var err error
		all, _, err = c.Allocations().List(nil)
		return err == nil && len(all) == 3
	})

	t.Run("jobs", func(t *testing.T) {
		jobs, _, err := c.Jobs().List(&nomadapi.QueryOptions{Filter: `Name contains "web" and Status != "dead"`})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, []string{"web-a", "web-b"}) {
			t.Fatalf("jobs %v, want [web-a web-b]", ids)
		}
		jobs, _, err = c.Jobs().List(&nomadapi.QueryOptions{Filter: `Priority == 70`})
		if err != nil || len(jobs) != 1 || jobs[0].ID != "api" {
			t.Fatalf("priority filter: %v %+v", err, jobs)
		}
	})

	t.Run("allocations, a page at a time", func(t *testing.T) {
		var want []string
		for _, al := range all {
			if strings.HasPrefix(al.JobID, "web") {
				want = append(want, al.ID)
			}
		}
		slices.Sort(want)
		q := &nomadapi.QueryOptions{Filter: `JobID matches "^web" and ClientStatus == "pending"`, PerPage: 1}
		var got []string
		for {
			page, qm, err := c.Allocations().List(q)
			if err != nil || len(page) != 1 {
				t.Fatalf("page at %q: %v %+v", q.NextToken, err, page)
			}
			got = append(got, page[0].ID)
			if qm.NextToken == "" {
				break
			}
			q.NextToken = qm.NextToken
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages %v, want %v", got, want)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, _, err := c.Jobs().List(&nomadapi.QueryOptions{Filter: `Status ==`})
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "invalid filter") {
			t.Fatalf("malformed filter: %v", err)
		}
		_, _, err = c.Allocations().List(&nomadapi.QueryOptions{Filter: `Bogus == "x"`})
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), `"Bogus"`) {
			t.Fatalf("unknown field: %v", err)
		}
	})
}

package nomad

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

func stubsOfSizes(sizes ...int) []*structs.JobListStub {
	out := make([]*structs.JobListStub, len(sizes))
	for i, n := range sizes {
		out[i] = &structs.JobListStub{ID: fmt.Sprintf("job-%03d", i), Namespace: "default", Meta: map[string]string{"blob": strings.Repeat("x", n)}}
	}
	return out
}

// allPages pages items with p and q until the last page, checking that
// each token moves forward.
func allPages[T any](t *testing.T, p pager[T], q structs.QueryOptions, items []T) ([][]T, error) {
	t.Helper()
	var pages [][]T
	for {
		var m structs.QueryMeta
		page, err := p.page(&q, &m, append([]T(nil), items...))
		if err != nil {
			return nil, err
		}
		pages = append(pages, page)
		if m.NextToken == "" {
			return pages, nil
		}
		if m.NextToken <= q.NextToken {
			t.Fatalf("token %q after %q", m.NextToken, q.NextToken)
		}
		q.NextToken = m.NextToken
	}
}

func ids(stubs []*structs.JobListStub) string {
	var out []string
	for _, s := range stubs {
		out = append(out, s.ID)
	}
	return strings.Join(out, ",")
}

func TestPagesHoldAtMostPerPageInOrderAndResumeAtTheToken(t *testing.T) {
	items := stubsOfSizes(make([]int, 25)...)
	want := ids(items)
	rand.New(rand.NewSource(1)).Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	pages, err := allPages(t, jobStubPager, structs.QueryOptions{PerPage: 10}, items)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 3 || len(pages[0]) != 10 || len(pages[1]) != 10 || len(pages[2]) != 5 {
		t.Fatalf("page sizes %d", len(pages))
	}
	var got []*structs.JobListStub
	for _, p := range pages {
		got = append(got, p...)
	}
	if ids(got) != want {
		t.Fatalf("pages hold %s", ids(got))
	}

	// The object a token names was deleted between pages: the next page
	// starts at the one after it.
	var m structs.QueryMeta
	q := structs.QueryOptions{PerPage: 10}
	if _, err := jobStubPager.page(&q, &m, items); err != nil {
		t.Fatal(err)
	}
	if m.NextToken != jobKey("job-010", "default") {
		t.Fatalf("token %q", m.NextToken)
	}
	var rest []*structs.JobListStub
	for _, s := range items {
		if s.ID != "job-010" {
			rest = append(rest, s)
		}
	}
	q.NextToken = m.NextToken
	page, err := jobStubPager.page(&q, &m, rest)
	if err != nil || len(page) != 10 || page[0].ID != "job-011" {
		t.Fatalf("page after a deleted token: %v %s", err, ids(page))
	}
}

func TestPagesStayWithinTheByteBudget(t *testing.T) {
	sizes := make([]int, 60)
	r := rand.New(rand.NewSource(2))
	for i := range sizes {
		sizes[i] = r.Intn(100 << 10)
	}
	items := stubsOfSizes(sizes...)
	p := jobStubPager
	p.budget = 300 << 10
	pages, err := allPages(t, p, structs.QueryOptions{}, items)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, page := range pages {
		n += len(page)
		enc, err := rpcx.Encode(page)
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) > p.budget {
			t.Fatalf("page %d is %d bytes, over the budget of %d", i, len(enc), p.budget)
		}
		if i < len(pages)-1 && len(enc) < p.budget/2 {
			t.Fatalf("page %d is %d bytes: pages should be filled", i, len(enc))
		}
	}
	if n != len(items) || len(pages) < 6 {
		t.Fatalf("%d objects in %d pages", n, len(pages))
	}

	// An object over the budget but within the message goes alone.
	big := stubsOfSizes(10, 400<<10, 10)
	pages, err = allPages(t, p, structs.QueryOptions{}, big)
	if err != nil || len(pages) != 3 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
}

func TestAnObjectNoAnswerCanCarryIsAnErrorNamingIt(t *testing.T) {
	items := stubsOfSizes(10, rpcx.DefaultMaxMessageSize, 10)
	_, err := allPages(t, jobStubPager, structs.QueryOptions{}, items)
	if !errors.Is(err, ErrAnswerTooLarge) || !strings.Contains(err.Error(), "job job-001 is") || !strings.Contains(err.Error(), "one RPC answer can carry") {
		t.Fatalf("err = %v", err)
	}
}

func TestAllocSizesCountTheirJobAndMeasureItOnce(t *testing.T) {
	job := &structs.Job{ID: "big", Meta: map[string]string{"blob": strings.Repeat("y", 50<<10)}}
	sz := newAllocSizer()
	for i := 0; i < 5; i++ {
		a := &structs.Allocation{ID: fmt.Sprintf("alloc-%d", i), Job: job, TaskStates: map[string]*structs.TaskState{"t": {State: "running"}}}
		est, err := sz.size(a)
		if err != nil {
			t.Fatal(err)
		}
		real, _ := encodedSize(a)
		if est+objectSlack < real || est > real+objectSlack {
			t.Fatalf("estimate %d for %d bytes", est, real)
		}
	}
	if len(sz.jobs) != 1 {
		t.Fatalf("the shared job was measured %d times", len(sz.jobs))
	}
}

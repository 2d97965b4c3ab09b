package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestFollowPagesReadsEveryPageOnce(t *testing.T) {
	pages := map[string]struct {
		items []int
		next  string
		index uint64
	}{
		"":  {[]int{1, 2}, "b", 10},
		"b": {[]int{3}, "c", 11},
		"c": {[]int{4, 5}, "", 12},
	}
	// The caller's own paging is applied after the whole list is read,
	// so it must not reach the server; only the first page may block.
	q := structs.QueryOptions{PerPage: 1, NextToken: "zzz", MinQueryIndex: 9, MaxQueryTime: time.Minute}
	var asked []structs.QueryOptions
	list, meta, err := followPages(&q, func() ([]int, *structs.QueryMeta, error) {
		asked = append(asked, q)
		p := pages[q.NextToken]
		return p.items, &structs.QueryMeta{Index: p.index, NextToken: p.next}, nil
	})
	if err != nil || len(list) != 5 || list[4] != 5 {
		t.Fatalf("list %v, %v", list, err)
	}
	if meta.Index != 10 || meta.NextToken != "" {
		t.Fatalf("meta %+v: want the first page's index and no token", meta)
	}
	if len(asked) != 3 || asked[0].PerPage != 0 || asked[0].NextToken != "" || asked[0].MinQueryIndex != 9 ||
		asked[1].MinQueryIndex != 0 || asked[1].NextToken != "b" || asked[2].NextToken != "c" {
		t.Fatalf("asked %+v", asked)
	}
}

func TestFollowPagesStopsAtATokenThatDoesNotMoveOn(t *testing.T) {
	var q structs.QueryOptions
	calls := 0
	_, _, err := followPages(&q, func() ([]int, *structs.QueryMeta, error) {
		calls++
		return []int{calls}, &structs.QueryMeta{NextToken: "same"}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "must move forward") || calls != 2 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// filterItem stands for a listed object: a field renamed and one hidden
// by tags, one sent only when set, a map, a slice, a time and a pointer.
type filterItem struct {
	ID      string
	Status  string
	Renamed string `json:"Alias" bexpr:"Alias"`
	Secret  string `json:"-" bexpr:"-"`
	Omitted string `json:",omitempty"`
	Meta    map[string]string
	Tags    []string
	When    time.Time
	Next    *filterItem
}

func TestListFilterEvaluatesWhatJSONShows(t *testing.T) {
	when := time.Date(2024, 5, 1, 10, 0, 0, 500_000_000, time.UTC)
	item := &filterItem{
		ID: "a", Status: "running", Renamed: "x", Secret: "s3cret", Omitted: "o",
		Meta: map[string]string{"team": "infra"}, Tags: []string{"web", "eu"}, When: when,
	}
	cases := []struct {
		name    string
		expr    string
		want    bool
		wantErr string
	}{
		{name: "an equality on a field matches", expr: `Status == "running"`, want: true},
		{name: "and short-circuits on a false left side", expr: `Status == "dead" and Nope == 1`, want: false},
		{name: "a renamed field is selected by its JSON name", expr: `Alias == "x"`, want: true},
		{name: "the Go name of a renamed field names nothing", expr: `Renamed == "x"`, wantErr: `"Renamed"`},
		{name: "a field hidden from JSON cannot be probed", expr: `Secret == "s3cret"`, wantErr: "ignored"},
		{name: "a field sent only when set is selected by its name", expr: `Omitted == "o"`, want: true},
		{name: "a field that does not exist is an error", expr: `Nope == "x"`, wantErr: `struct field with name "Nope"`},
		{name: "a map entry is selected by key", expr: `Meta["team"] == "infra"`, want: true},
		{name: "a missing map key matches no equality", expr: `Meta["owner"] == "infra"`, want: false},
		{name: "a missing map key matches every inequality", expr: `Meta["owner"] != "infra"`, want: true},
		{name: "contains looks into a slice", expr: `Tags contains "eu"`, want: true},
		{name: "matches applies a regular expression", expr: `ID matches "^a$" and Status != ""`, want: true},
		{name: "a time compares as its JSON text", expr: `When == "2024-05-01T10:00:00.5Z"`, want: true},
		{name: "a path through a nil pointer is an error", expr: `Next.ID == "b"`, wantErr: "Next"},
		{name: "a nil check guards a path through a pointer", expr: `Next is not nil and Next.ID == "b"`, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseFilter(tc.expr)
			if err != nil {
				t.Fatalf("parse %q: %v", tc.expr, err)
			}
			got, err := filterList(f, []*filterItem{item})
			if tc.wantErr != "" {
				if err == nil || errorStatus(err) != http.StatusBadRequest || !strings.Contains(err.Error(), tc.wantErr) ||
					!strings.Contains(err.Error(), strconv.Quote(tc.expr)) {
					t.Fatalf("want a 400 quoting the filter and mentioning %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if matched := len(got) == 1; matched != tc.want {
				t.Fatalf("%s: matched %v, want %v", tc.expr, matched, tc.want)
			}
		})
	}
}

func TestParseFilter(t *testing.T) {
	t.Run("an empty expression is the nil filter, which keeps every item", func(t *testing.T) {
		f, err := parseFilter("")
		if f != nil || err != nil {
			t.Fatalf("got %v, %v", f, err)
		}
		list := []int{3, 1, 2}
		if got, err := filterList(f, list); err != nil || !slices.Equal(got, list) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("a malformed expression is a 400 naming the parameter and quoting the parser", func(t *testing.T) {
		_, err := parseFilter(`Status ==`)
		var ce *codedError
		if !errors.As(err, &ce) || ce.code != http.StatusBadRequest ||
			!strings.Contains(err.Error(), `invalid filter "Status =="`) || !strings.Contains(err.Error(), "no match found") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an unknown field on an empty list is not evaluated, so not an error", func(t *testing.T) {
		f, err := parseFilter(`Nope == 1`)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := filterList(f, []*filterItem{}); err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v", got, err)
		}
	})
}

func TestPaginateFiltersBeforePaging(t *testing.T) {
	status := map[string]string{"a": "running", "b": "dead", "c": "running", "d": "dead", "e": "running", "f": "running"}
	var list []*filterItem
	for _, id := range []string{"f", "e", "d", "c", "b", "a"} {
		list = append(list, &filterItem{ID: id, Status: status[id]})
	}
	f, err := parseFilter(`Status == "running"`)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i *filterItem) string { return i.ID }
	ids := func(items []*filterItem) (out []string) {
		for _, i := range items {
			out = append(out, i.ID)
		}
		return out
	}

	var pages [][]string
	var tokens []string
	q := structs.QueryOptions{PerPage: 2}
	for {
		var m structs.QueryMeta
		page, err := paginate(&q, &m, f, list, key)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, ids(page))
		tokens = append(tokens, m.NextToken)
		if m.NextToken == "" {
			break
		}
		q.NextToken = m.NextToken
	}
	// per_page counts matches, and each token names the next match (e,
	// not d, which the filter drops).
	want := [][]string{{"a", "c"}, {"e", "f"}}
	if !slices.EqualFunc(pages, want, slices.Equal) || !slices.Equal(tokens, []string{"e", ""}) {
		t.Fatalf("pages %v tokens %q, want %v and [e \"\"]", pages, tokens, want)
	}

	t.Run("a filter without paging keeps the server's order", func(t *testing.T) {
		page, err := paginate(&structs.QueryOptions{}, &structs.QueryMeta{}, f, list, key)
		if err != nil || !slices.Equal(ids(page), []string{"f", "e", "c", "a"}) {
			t.Fatalf("got %v, %v", ids(page), err)
		}
	})
	t.Run("an expression that cannot be evaluated fails the page", func(t *testing.T) {
		bad, err := parseFilter(`Nope == 1`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := paginate(&structs.QueryOptions{PerPage: 1}, &structs.QueryMeta{}, bad, list, key); errorStatus(err) != http.StatusBadRequest {
			t.Fatalf("got %v", err)
		}
	})
}

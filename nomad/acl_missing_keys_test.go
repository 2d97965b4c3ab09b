package nomad

import (
	"errors"
	"slices"
	"testing"

	"github.com/hashicorp/go-memdb"
)

func TestMissingKeysInOrder(t *testing.T) {
	have := map[string]*int{"a": new(int), "c": new(int)}
	get := func(ws memdb.WatchSet, k string) (*int, error) { return have[k], nil }
	got, err := missingKeys([]string{"d", "a", "b", "c"}, get)
	if err != nil || !slices.Equal(got, []string{"d", "b"}) {
		t.Fatalf("missingKeys = %v, %v; want [d b]", got, err)
	}
	if got, _ := missingKeys([]string{"a", "c"}, get); got != nil {
		t.Fatalf("all present: %v, want none", got)
	}
	boom := errors.New("boom")
	fail := func(memdb.WatchSet, string) (*int, error) { return nil, boom }
	if _, err := missingKeys([]string{"a"}, fail); !errors.Is(err, boom) {
		t.Fatalf("err %v, want the lookup's", err)
	}
}

package nomad

import (
	"slices"
	"testing"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// sliceIter is a memdb.ResultIterator over a fixed slice.
type sliceIter struct{ items []any }

func (s *sliceIter) WatchCh() <-chan struct{} { return nil }

func (s *sliceIter) Next() any {
	if len(s.items) == 0 {
		return nil
	}
	next := s.items[0]
	s.items = s.items[1:]
	return next
}

func TestListScopeFiltersByNamespacePrefixAndToken(t *testing.T) {
	reader, err := acl.Compile(false, `namespace "web" { policy = "read" }`)
	if err != nil {
		t.Fatal(err)
	}
	evals := []any{
		&structs.Evaluation{ID: "aa1", Namespace: "web"},
		&structs.Evaluation{ID: "bb1", Namespace: "web"},
		&structs.Evaluation{ID: "aa2", Namespace: "db"},
		&structs.Evaluation{ID: "aa3", Namespace: structs.DefaultNamespace},
		&structs.Evaluation{ID: "aa4", Namespace: "web"},
	}
	where := func(e *structs.Evaluation) (string, string) { return e.Namespace, e.ID }
	ids := func(s listScope) []string {
		var out []string
		for _, e := range collect(&sliceIter{items: slices.Clone(evals)}, s, where) {
			out = append(out, e.ID)
		}
		return out
	}
	cases := []struct {
		name  string
		scope listScope
		want  []string
	}{
		{"all namespaces, the token's only", listScope{ns: "*", prefix: "aa", acl: reader, cap: acl.NamespaceCapabilityReadJob}, []string{"aa1", "aa4"}},
		{"management sees every namespace", listScope{ns: "*", prefix: "aa", acl: acl.ManagementACL, cap: acl.NamespaceCapabilityReadJob}, []string{"aa1", "aa2", "aa3", "aa4"}},
		{"empty namespace is the default", listScope{ns: "", acl: acl.ManagementACL, cap: acl.NamespaceCapabilityReadJob}, []string{"aa3"}},
		{"one namespace, any prefix", listScope{ns: "web", acl: reader, cap: acl.NamespaceCapabilityReadJob}, []string{"aa1", "bb1", "aa4"}},
		{"a capability the token lacks", listScope{ns: "web", acl: reader, cap: acl.NamespaceCapabilitySubmitJob}, nil},
	}
	for _, c := range cases {
		if got := ids(c.scope); !slices.Equal(got, c.want) {
			t.Errorf("%s: listed %v, want %v", c.name, got, c.want)
		}
	}
	if got := collect(&sliceIter{}, listScope{ns: "*", acl: acl.ManagementACL}, where); got == nil || len(got) != 0 {
		t.Errorf("nothing to list: %#v, want an empty, non-nil list", got)
	}
}

package structs

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"unsafe"
)

// nodesimAttributes are the attributes drover nodesim registers: the
// shape of the heap figures in Attributes' comment.
var nodesimAttributes = map[string]string{
	"kernel.name": "linux", "kernel.arch": "x86_64", "os.name": "nodesim", "cpu.arch": "amd64",
	"cpu.numcores": "4", "cpu.totalcompute": "4000", "memory.totalbytes": "8589934592",
	"unique.hostname": "sim-1", "unique.network.ip-address": "127.0.0.1",
	"nomad.region": "global", "nomad.version": "nodesim", "driver.mock_driver": "1", "driver.mock": "1",
}

func TestAttributesReadAsTheMapTheyWereMadeFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    map[string]string
	}{
		{"nil", nil},
		{"empty", map[string]string{}},
		{"one", map[string]string{"kernel.name": "linux"}},
		{"an empty key and an empty value", map[string]string{"": "x", "y": ""}},
		{"nodesim's", nodesimAttributes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAttributes(tc.m)
			if a.IsNil() != (tc.m == nil) || a.Len() != len(tc.m) {
				t.Fatalf("IsNil %v, Len %d; made from a map of %d (nil: %v)", a.IsNil(), a.Len(), len(tc.m), tc.m == nil)
			}
			got := a.Map()
			if !maps.Equal(got, tc.m) || (got == nil) != (tc.m == nil) {
				t.Fatalf("Map() = %#v, want %#v", got, tc.m)
			}
			var keys []string
			for k, v := range a.All() {
				keys = append(keys, k)
				if v != tc.m[k] {
					t.Errorf("All yields %s=%q, want %q", k, v, tc.m[k])
				}
			}
			if want := slices.Sorted(maps.Keys(tc.m)); !slices.Equal(keys, want) {
				t.Errorf("All yields keys %q, want them sorted: %q", keys, want)
			}
			for k, v := range tc.m {
				if got, ok := a.Get(k); !ok || got != v {
					t.Errorf("Get(%q) = %q, %v; want %q", k, got, ok, v)
				}
			}
			for _, k := range []string{"absent", "kernel.nam", "kernel.namex", "zzz", "\x00"} {
				if _, in := tc.m[k]; in {
					continue
				}
				if v, ok := a.Get(k); ok || v != "" || a.Value(k) != "" {
					t.Errorf("Get(%q) = %q, %v for a key the map has not", k, v, ok)
				}
			}
			if !a.Equal(NewAttributes(tc.m)) {
				t.Error("two sets made from one map are not Equal")
			}
		})
	}
}

func TestNewAttributesCopiesItsMap(t *testing.T) {
	m := map[string]string{"a": "1"}
	a := NewAttributes(m)
	m["a"], m["b"] = "changed", "added"
	if a.Value("a") != "1" || a.Len() != 1 {
		t.Fatalf("changing the map changed the set: %v", a)
	}
	a.Map()["a"] = "changed"
	if a.Value("a") != "1" {
		t.Fatal("changing Map's result changed the set")
	}
}

func TestAttributesWithAndWithoutLeaveTheOriginalAsItWas(t *testing.T) {
	orig := NewAttributes(map[string]string{"b": "2", "d": "4"})
	for _, tc := range []struct {
		name string
		got  Attributes
		want map[string]string
	}{
		{"a new key first", orig.With("a", "1"), map[string]string{"a": "1", "b": "2", "d": "4"}},
		{"a new key between", orig.With("c", "3"), map[string]string{"b": "2", "c": "3", "d": "4"}},
		{"a new key last", orig.With("e", "5"), map[string]string{"b": "2", "d": "4", "e": "5"}},
		{"a changed value", orig.With("b", "two"), map[string]string{"b": "two", "d": "4"}},
		{"a key removed", orig.Without("b"), map[string]string{"d": "4"}},
		{"an absent key removed", orig.Without("x"), map[string]string{"b": "2", "d": "4"}},
		{"the last key removed", orig.Without("b").Without("d"), map[string]string{}},
		{"a key added to the nil set", Attributes{}.With("k", "v"), map[string]string{"k": "v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got.Map(); !maps.Equal(got, tc.want) || got == nil {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if !tc.got.Equal(NewAttributes(tc.want)) {
				t.Fatalf("%v is not Equal to the set made from %v", tc.got, tc.want)
			}
			if !maps.Equal(orig.Map(), map[string]string{"b": "2", "d": "4"}) {
				t.Fatalf("the original changed: %v", orig)
			}
		})
	}
	if !orig.With("b", "two").Keys().Equal(orig.Keys()) || orig.With("b", "two").Keys() != orig.Keys() {
		t.Error("changing a value does not share the keys")
	}
}

func TestAttributesEqualTellsNilFromEmpty(t *testing.T) {
	nilSet, empty := NewAttributes(nil), NewAttributes(map[string]string{})
	if nilSet.Equal(empty) || empty.Equal(nilSet) {
		t.Fatal("the nil set equals the empty set")
	}
	if !nilSet.Equal(Attributes{}) || !empty.Equal(AttributesOf()) {
		t.Fatal("nil or empty sets made two ways differ")
	}
	if NewAttributes(map[string]string{"a": "1"}).Equal(NewAttributes(map[string]string{"b": "1"})) {
		t.Fatal("sets with different keys are equal")
	}
}

func TestAttributesRekeyedSharesTheKeysAndKeepsTheValues(t *testing.T) {
	a, b := NewAttributes(nodesimAttributes), NewAttributes(maps.Clone(nodesimAttributes))
	upper := func(_, v string) string { return v }
	c := b.Rekeyed(a.Keys(), upper)
	if c.Keys() != a.Keys() || !c.Equal(b) {
		t.Fatalf("Rekeyed on equal keys: keys shared %v, equal %v", c.Keys() == a.Keys(), c.Equal(b))
	}
	other := NewAttributes(map[string]string{"x": "1"})
	if d := b.Rekeyed(other.Keys(), upper); !d.Equal(b) || d.Keys() != b.Keys() {
		t.Fatalf("Rekeyed on other keys changed the set: %v", d)
	}
	if !c.Same(c) || c.Same(b) {
		t.Fatal("Same tells sets apart by their values' memory")
	}
}

func TestAttributesStringReadsAsAMap(t *testing.T) {
	if got := AttributesOf("b", "2", "a", "1").String(); got != "map[a:1 b:2]" {
		t.Fatalf("String() = %q", got)
	}
}

// A Node must stay in its 320-byte size class: Attributes take four
// words where a map took one, and the two bools share one.
func TestNodeStaysInItsSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(Node{}); size > 320 {
		t.Fatalf("a Node takes %d bytes, more than its 320-byte size class", size)
	}
}

var sinkString string

// BenchmarkAttributesGet compares a lookup in the sorted keys with one in
// a map of the same attributes.
func BenchmarkAttributesGet(b *testing.B) {
	m := maps.Clone(nodesimAttributes)
	for i := range 40 {
		m["extra.attribute."+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	for _, n := range []int{13, 53} {
		mm := map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(m))[:n] {
			mm[k] = m[k]
		}
		a := NewAttributes(mm)
		keys := []string{"kernel.name", "cpu.arch", "unique.hostname", "driver.mock", "no.such.key"}
		b.Run("sorted/"+strconv.Itoa(n), func(b *testing.B) {
			for i := range b.N {
				sinkString = a.Value(keys[i%len(keys)])
			}
		})
		b.Run("map/"+strconv.Itoa(n), func(b *testing.B) {
			for i := range b.N {
				sinkString = mm[keys[i%len(keys)]]
			}
		})
	}
}

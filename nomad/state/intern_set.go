package state

import "hash/maphash"

// stringSet is the intern table's storage: an open-addressing hash set of
// strings with linear probing. A Go map[string]string would do, at twice
// the cost: each entry would hold the string twice (key and value, 32
// bytes) where the set holds it once (16), and the table keeps one entry
// for every node's ID and name at fleet size. Nothing is ever removed
// (the intern table starts over instead), so probing needs no
// tombstones. Not safe for concurrent use: internTable's mutex guards it.
type stringSet struct {
	seed  maphash.Seed
	slots []string // len is zero or a power of two; "" marks a free slot
	n     int
}

// stringSetMinSlots is the first allocation's size.
const stringSetMinSlots = 64

func newStringSet() *stringSet { return &stringSet{seed: maphash.MakeSeed()} }

// slot returns the index of s, or of the free slot where s would go.
// There is always a free slot: add keeps the set at most 3/4 full.
func (t *stringSet) slot(s string) int {
	mask := len(t.slots) - 1
	i := int(maphash.String(t.seed, s)) & mask
	for {
		if c := t.slots[i]; c == "" || c == s {
			return i
		}
		i = (i + 1) & mask
	}
}

// get returns the set's copy of s, if it holds one.
func (t *stringSet) get(s string) (string, bool) {
	if len(t.slots) == 0 {
		return "", false
	}
	c := t.slots[t.slot(s)]
	return c, c != ""
}

// add puts s, which must be non-empty and not in the set, into it.
func (t *stringSet) add(s string) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.slots[t.slot(s)] = s
	t.n++
}

func (t *stringSet) grow() {
	old := t.slots
	t.slots = make([]string, max(stringSetMinSlots, 2*len(old)))
	for _, s := range old {
		if s != "" {
			t.slots[t.slot(s)] = s
		}
	}
}

// len is how many strings the set holds.
func (t *stringSet) len() int { return t.n }

package state

import (
	"strings"
	"sync"
)

// Interning: the strings of stored objects repeat. Every alloc of a job
// carries the job's ID, namespace, group and eval; the four allocs on a
// node carry its ID and name; every running task reports the same state
// and event texts; every node advertises the same attribute keys and
// mostly the same values. Each arrives freshly decoded from a raft entry,
// so without help the store keeps one copy per object, and at fleet size
// those copies are a large part of the servers' heap. The store therefore
// replaces the strings of the objects it is about to keep with a shared
// copy of an equal string.
//
// Interning never changes a value (the shared copy is equal), so it keeps
// the FSM deterministic: two servers applying the same log hold equal
// objects whether or not their strings are shared.
//
// The table is Drover's own rather than Go's unique package: unique keeps
// a canonical copy only while a unique.Handle to it is alive, and the
// store keeps plain strings, so with unique every garbage collection would
// start a new copy of each value and objects stored on either side of it
// would not share. The table is bounded instead, in entries and in the
// length of the strings it takes, so that no request can make it grow
// without limit; when it is full it starts again empty (objects already
// stored keep their shared copies).

const (
	// internMaxEntries bounds the table. Distinct values that recur at
	// fleet size are far fewer: one ID per node, eval, job and deployment,
	// and a few hundred attribute keys and values.
	internMaxEntries = 1 << 16
	// internMaxLen is the longest string interned. Longer strings are
	// rarely repeated (free-text messages) and would make the bound in
	// bytes loose.
	internMaxLen = 128
)

// internTable maps a string to its shared copy.
type internTable struct {
	mu sync.Mutex
	m  *stringSet
}

// interned is the table the store uses. It is shared by every store in
// the process (a restored store, snapshots, tests) so that they share
// copies too.
var interned = newInternTable()

func newInternTable() *internTable { return &internTable{m: newStringSet()} }

// intern returns the shared copy of s (s itself the first time).
func (t *internTable) intern(s string) string { return t.lookup(s, true) }

// shared returns the table's copy of s if it holds one, and s itself
// otherwise, without adding s: for values unlikely to recur, whose entry
// would cost more than sharing could save.
func (t *internTable) shared(s string) string { return t.lookup(s, false) }

// lookup returns the table's copy of s, or s itself, which it adds to
// the table if add (starting a new table when this one is full).
func (t *internTable) lookup(s string, add bool) string {
	if s == "" || len(s) > internMaxLen {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m.get(s); ok {
		return c
	}
	if !add {
		return s
	}
	if t.m.len() >= internMaxEntries {
		t.m = newStringSet()
	}
	t.m.add(s)
	return s
}

// internString replaces *s with its shared copy.
func internString(s *string) { *s = interned.intern(*s) }

// internStringMap returns a copy of m with shared keys and values. A
// map's keys cannot be replaced in place; the copy costs what the map it
// replaces did, and that one becomes garbage.
func internStringMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[interned.intern(k)] = interned.intern(v)
	}
	return out
}

// uniqueAttributePrefix marks node attributes whose values differ per
// node by convention (unique.hostname, unique.network.ip-address,
// unique.storage.bytesfree, ...).
const uniqueAttributePrefix = "unique."

// internAttributeValue is the store's copy of a node attribute's value,
// except that a unique.* value is only shared with a copy the table holds
// (the hostname is often the node's name, interned just before) and never
// added: an entry for a value no other node has saves nothing, costs the
// table an entry per node, and fills it so that it starts over sooner.
func internAttributeValue(key, v string) string {
	if strings.HasPrefix(key, uniqueAttributePrefix) {
		return interned.shared(v)
	}
	return interned.intern(v)
}

// InternString returns the store's shared copy of s (s itself if the
// store holds none yet). Other parts of a server that keep a string per
// stored object for as long as it lives, such as the heartbeater's node
// IDs, use it to share the store's copy instead of keeping the one a
// request decoded.
func InternString(s string) string { return interned.intern(s) }

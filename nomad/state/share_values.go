package state

import (
	"encoding/binary"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/drover-sched/drover/structs"
)

// Some parts of an alloc are not only made of repeated strings but are
// equal as a whole across many allocs: the grant of every alloc of a job
// version without ports or reserved cores, and the count maps of a
// placement's metric (NodesAvailable is the same for every alloc an eval
// places). Stored objects are never changed, so the store keeps one copy
// of each such value and points every equal one at it.
//
// A value is shared only after reflect.DeepEqual has found it equal to
// the kept copy, so the key that finds the candidate need not cover every
// field (a field added later makes a value differ, never wrongly equal).
// Sharing never changes a value, so applies stay deterministic.

// sharedValuesMax bounds each table; it starts again empty when full.
const sharedValuesMax = 1 << 12

type valueTable[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// share returns the kept value equal to v under key, keeping v if there
// is none.
func (t *valueTable[T]) share(key string, v T) T {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kept, ok := t.m[key]; ok && reflect.DeepEqual(kept, v) {
		return kept
	}
	if t.m == nil || len(t.m) >= sharedValuesMax {
		t.m = make(map[string]T)
	}
	t.m[key] = v
	return v
}

var (
	sharedGrants     valueTable[*structs.AllocatedResources]
	sharedIntMaps    valueTable[map[string]int]
	sharedNameLists  valueTable[*[]string]
	sharedStringMaps valueTable[map[string]string]
	sharedScores     valueTable[[]float64]
)

// sharedStringMapMaxKey bounds the key a string map is looked up by; a
// larger map (a node's attributes, with its hostname and addresses, is
// rarely equal to another's anyway) is only interned.
const sharedStringMapMaxKey = 1024

// shareAllocatedResources returns r, which the caller owns, or the kept
// grant equal to it. Grants with networks, ports or reserved cores hold
// per-alloc addresses and ports and are only interned.
func shareAllocatedResources(r *structs.AllocatedResources) *structs.AllocatedResources {
	if r == nil {
		return nil
	}
	internAllocatedResources(r)
	if len(r.Shared.Networks) > 0 || len(r.Shared.Ports) > 0 {
		return r
	}
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(r.Tasks)) {
		t := r.Tasks[name]
		if t == nil || len(t.Networks) > 0 || len(t.Cpu.ReservedCores) > 0 {
			return r
		}
		key.WriteString(name)
		for _, n := range []int64{t.Cpu.CpuShares, t.Memory.MemoryMB, t.Memory.MemoryMaxMB} {
			key.WriteByte(0)
			key.WriteString(strconv.FormatInt(n, 10))
		}
		key.WriteByte(1)
	}
	key.WriteString(strconv.FormatInt(r.Shared.DiskMB, 10))
	return sharedGrants.share(key.String(), r)
}

// shareIntMap returns a map equal to m with its keys interned: the kept
// one if there is one.
func shareIntMap(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key.WriteString(k)
		key.WriteByte(0)
		key.WriteString(strconv.Itoa(m[k]))
		key.WriteByte(0)
	}
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[interned.intern(k)] = v
	}
	return sharedIntMaps.share(key.String(), out)
}

// shareScoreNames returns s with its names slice replaced by the kept
// slice of the same names, so that the scores of every candidate of every
// alloc share one (the sets are few: one per combination of scorers).
func shareScoreNames(s structs.NodeScores) structs.NodeScores {
	names := s.Names()
	if len(names) == 0 {
		return s
	}
	shared := make([]string, len(names))
	for i, n := range names {
		shared[i] = interned.intern(n)
	}
	return s.ShareNames(sharedNameLists.share(strings.Join(names, "\x00"), &shared))
}

// shareStringMap returns a map equal to m with its keys and values
// interned: the kept one if there is one. Nodes' meta, links and driver
// attributes repeat across a fleet (a rack, a zone, a driver's version).
func shareStringMap(m map[string]string) map[string]string {
	out := internStringMap(m)
	if out == nil {
		return nil
	}
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(out)) {
		if key.Len()+len(k)+len(out[k]) > sharedStringMapMaxKey {
			return out
		}
		key.WriteString(k)
		key.WriteByte(0)
		key.WriteString(out[k])
		key.WriteByte(0)
	}
	return sharedStringMaps.share(key.String(), out)
}

// shareScores returns s with scores of the store's own: the kept slice of
// the same values if there is one, else a copy (s's may be the caller's).
// Candidates that look alike to the scheduler score alike (every node of a
// homogeneous fleet with the same load has the same binpack score, and
// most other scorers give most nodes 0), so the top candidates of many
// allocs share a few slices. The key is the scores' bits, so only values
// equal bit for bit share (never a NaN: DeepEqual finds it unequal).
func shareScores(s structs.NodeScores) structs.NodeScores {
	scores := s.Scores()
	if len(scores) == 0 {
		return s.Clone()
	}
	key := make([]byte, 0, 8*len(scores))
	for _, v := range scores {
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(v))
	}
	return s.ShareScores(sharedScores.share(string(key), slices.Clone(scores)))
}

package structs

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Attributes are encoded as the map[string]string they were: a msgpack
// map (RPC, the raft log, snapshots) and a JSON object (the HTTP API,
// Nomad's api.Node). The nil set is nil and null, as a nil map was; the
// empty set an empty map. Keys are written in sorted order, so the
// encoding is deterministic (a Go map's was not, in msgpack) and the JSON
// is byte for byte what encoding/json wrote for the map, which sorts keys
// (with its default HTML escaping, which MarshalJSON always applies: an
// encoder set not to escape would have written <, > and & of a map as
// they are).

// attributePairs is a set's keys and values in turn, which go-msgpack
// writes as a map of len/2 entries (codec.MapBySlice).
type attributePairs []string

// MapBySlice marks attributePairs for go-msgpack as a map.
func (attributePairs) MapBySlice() {}

// pairs recycles the slices encoding fills, so that encoding a node
// allocates nothing for its attributes.
var pairs = sync.Pool{New: func() any { return new(attributePairs) }}

// CodecEncodeSelf writes a as a msgpack map, or nil.
func (a *Attributes) CodecEncodeSelf(enc *codec.Encoder) {
	if a.keys == nil {
		enc.MustEncode(nil)
		return
	}
	p := pairs.Get().(*attributePairs)
	if *p == nil {
		// A slice the pool just made is nil, which go-msgpack would
		// write as nil: the empty set must stay an empty map.
		*p = make(attributePairs, 0, 2*len(a.vals))
	}
	for i, k := range a.keys.names {
		*p = append(*p, k, a.vals[i])
	}
	enc.MustEncode(*p)
	putPairs(p)
}

// putPairs returns p to the pool, emptied, unless a large message grew it:
// the pool keeps no more than a real node's attributes need.
func putPairs(p *attributePairs) {
	if cap(*p) > maxPooledPairs {
		return
	}
	clear(*p)
	*p = (*p)[:0]
	pairs.Put(p)
}

// maxPooledPairs bounds the slices the pool keeps: 256 attributes.
const maxPooledPairs = 512

// CodecDecodeSelf reads a msgpack map (or nil) into a. go-msgpack would
// fill the pairs from an array too, which a map never took: helper/rpcx's
// decode check refuses an array there before anything from the network is
// decoded, and Drover writes attributes only as a map. As decoding into a
// map did, a key given twice takes its last value, and the message's
// entries are merged into those a has; a itself is replaced, never
// changed, since stored nodes share theirs.
//
// The map is read into a pooled slice of keys and values rather than a Go
// map, so that a node's attributes cost the decoder two exact slices (its
// keys and its values) and nothing else. The decoder's cost estimate
// (helper/rpcx) charges them as the map[string]string they were
// (DecodesAs), which takes more.
func (a *Attributes) CodecDecodeSelf(dec *codec.Decoder) {
	p := pairs.Get().(*attributePairs)
	defer putPairs(p)
	// Decoding through a pointer tells nil (the pointer set to nil) from
	// an empty map (an empty slice).
	pp := p
	dec.MustDecode(&pp)
	if pp == nil {
		if a.keys != nil {
			*a = Attributes{} // a nil map decoded into a map makes it nil
		}
		return
	}
	*p = *pp
	if a.keys != nil && a.Len() > 0 {
		m := a.Map()
		for i := 0; i+1 < len(*p); i += 2 {
			m[(*p)[i]] = (*p)[i+1]
		}
		*a = NewAttributes(m)
		return
	}
	*a = attributesFromPairs(*p)
}

// attributesFromPairs returns the set of p's keys and values in turn, the
// last value of a key given twice. It sorts p (scratch: the decoder's
// pooled slice) in place and allocates only the set's two exact slices,
// so that decoding costs no more than the map the estimate charges.
func attributesFromPairs(p []string) Attributes {
	n := len(p) / 2
	if n == 0 {
		return Attributes{keys: emptyAttributeKeys}
	}
	// p's keys and values in turn are laid out as n [2]string, key first.
	kv := unsafe.Slice((*[2]string)(unsafe.Pointer(&p[0])), n)
	slices.SortStableFunc(kv, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	// Keep the last of each run of equal keys (the stable sort kept them
	// in the message's order).
	w := 0
	for r := range n {
		if r+1 < n && kv[r+1][0] == kv[r][0] {
			continue
		}
		kv[w] = kv[r]
		w++
	}
	names, vals := make([]string, w), make([]string, w)
	for i := range w {
		names[i], vals[i] = kv[i][0], kv[i][1]
	}
	return Attributes{keys: &AttributeKeys{names: names}, vals: vals}
}

// DecodesAs tells helper/rpcx's decode cost estimate to charge an
// Attributes as the map[string]string it is decoded through.
func (*Attributes) DecodesAs() any { return map[string]string(nil) }

// MarshalJSON writes a as a JSON object, or null.
func (a Attributes) MarshalJSON() ([]byte, error) {
	return json.Marshal(a.Map())
}

// UnmarshalJSON reads a JSON object (or null) into a, merged into the
// attributes a has as encoding/json merges into a map.
func (a *Attributes) UnmarshalJSON(b []byte) error {
	m := a.Map()
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*a = NewAttributes(m)
	return nil
}

package structs

import (
	"encoding/json"
	"maps"
	"math"
	"slices"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// NodeScores is one candidate node's scores by scorer name ("binpack",
// "job-anti-affinity", ...), kept with every allocation as part of its
// placement metrics.
//
// On the wire (RPC, raft entries, snapshots) and in the HTTP API it is a
// map from name to score, as Nomad's is. In memory it is two parallel
// slices, because a server keeps the scores of the top candidates of
// every alloc it stores: as Go maps of a handful of entries they were the
// largest part of an alloc's record at fleet size. The names come from a
// small fixed set and the state store shares one names slice among all
// scores with the same names (ShareNames), and one scores slice among
// equal scores (ShareScores), so what an alloc pays for is mostly its
// candidates' node IDs and normalized scores.
//
// The zero value is empty. A NodeScores is changed only by Set, which
// never writes to slices it did not make, so names may be shared. The
// names are held through a pointer so that a candidate's scores cost 32
// bytes besides the floats.
type NodeScores struct {
	names  *[]string
	scores []float64
}

// NewNodeScores returns the scores scores[i] for names[i], copying both.
// It panics if the lengths differ, a caller's bug.
func NewNodeScores(names []string, scores []float64) NodeScores {
	if len(names) != len(scores) {
		panic("structs: NewNodeScores given different numbers of names and scores")
	}
	list := make([]string, 0, len(names))
	s := NodeScores{names: &list, scores: make([]float64, 0, len(names))}
	for i, n := range names {
		s.insert(n, scores[i])
	}
	return s
}

// insert puts name in its sorted place, or replaces its score, in slices
// s owns.
func (s *NodeScores) insert(name string, score float64) {
	i, found := slices.BinarySearch(*s.names, name)
	if found {
		s.scores[i] = score
		return
	}
	*s.names = slices.Insert(*s.names, i, name)
	s.scores = slices.Insert(s.scores, i, score)
}

// Len is the number of scores.
func (s NodeScores) Len() int { return len(s.Names()) }

// Get returns the score for name and whether there is one.
func (s NodeScores) Get(name string) (float64, bool) {
	if i, found := slices.BinarySearch(s.Names(), name); found {
		return s.scores[i], true
	}
	return 0, false
}

// Set records the score for name, replacing an earlier one. It copies
// before it writes, so a NodeScores sharing its slices with s is not
// changed.
func (s *NodeScores) Set(name string, score float64) {
	list := append([]string{}, s.Names()...)
	c := NodeScores{names: &list, scores: append([]float64{}, s.scores...)}
	c.insert(name, score)
	*s = c
}

// Names returns the scorers' names, sorted. The slice may be shared: do
// not change it.
func (s NodeScores) Names() []string {
	if s.names == nil {
		return nil
	}
	return *s.names
}

// ShareNames returns s with its names replaced by *names, which must hold
// the same names (the state store's shared copy). It panics if they
// differ, a caller's bug.
func (s NodeScores) ShareNames(names *[]string) NodeScores {
	if names == nil || !slices.Equal(s.Names(), *names) {
		panic("structs: ShareNames given other names")
	}
	return NodeScores{names: names, scores: s.scores}
}

// Scores returns the scores, in the order of Names. The slice may be
// shared: do not change it.
func (s NodeScores) Scores() []float64 { return s.scores }

// ShareScores returns s with its scores replaced by scores, which must be
// the same values bit for bit (the state store's shared copy: candidates
// of a homogeneous fleet score alike). It panics if they differ, a
// caller's bug.
func (s NodeScores) ShareScores(scores []float64) NodeScores {
	if len(scores) != len(s.scores) {
		panic("structs: ShareScores given other scores")
	}
	for i, v := range scores {
		if math.Float64bits(v) != math.Float64bits(s.scores[i]) {
			panic("structs: ShareScores given other scores")
		}
	}
	return NodeScores{names: s.names, scores: scores}
}

// Clone returns s with scores of its own (the names stay shared).
func (s NodeScores) Clone() NodeScores {
	return NodeScores{names: s.names, scores: slices.Clone(s.scores)}
}

// Map returns the scores as a map, the shape the wire and the API use;
// nil for a zero NodeScores, as for a nil map before.
func (s NodeScores) Map() map[string]float64 {
	if s.names == nil {
		return nil
	}
	m := make(map[string]float64, len(*s.names))
	for i, n := range *s.names {
		m[n] = s.scores[i]
	}
	return m
}

// NodeScoresFromMap builds NodeScores from the map shape. A nil map gives
// the zero NodeScores.
func NodeScoresFromMap(m map[string]float64) NodeScores {
	if m == nil {
		return NodeScores{}
	}
	names := append(make([]string, 0, len(m)), slices.Sorted(maps.Keys(m))...)
	scores := make([]float64, len(names))
	for i, n := range names {
		scores[i] = m[n]
	}
	return NodeScores{names: &names, scores: scores}
}

// MarshalJSON writes the map shape.
func (s NodeScores) MarshalJSON() ([]byte, error) { return json.Marshal(s.Map()) }

// UnmarshalJSON reads the map shape.
func (s *NodeScores) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*s = NodeScoresFromMap(m)
	return nil
}

// CodecEncodeSelf writes the map shape in msgpack, so the wire is what it
// was when the scores were a map.
func (s NodeScores) CodecEncodeSelf(e *codec.Encoder) { e.MustEncode(s.Map()) }

// DecodesAs tells helper/rpcx's decode cost estimate to charge NodeScores
// as the map[string]float64 they are decoded through (it would otherwise
// see a struct without fields, and charge nothing for the scores).
func (*NodeScores) DecodesAs() any { return map[string]float64(nil) }

// CodecDecodeSelf reads the map shape in msgpack.
func (s *NodeScores) CodecDecodeSelf(d *codec.Decoder) {
	var m map[string]float64
	d.MustDecode(&m)
	*s = NodeScoresFromMap(m)
}

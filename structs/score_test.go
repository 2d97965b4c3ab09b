package structs

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	nomadapi "github.com/hashicorp/nomad/api"
)

// mapNodeScoreMeta is NodeScoreMeta as it was with Scores a map: the wire
// shape older servers and clients send and expect.
type mapNodeScoreMeta struct {
	NodeID    string
	Scores    map[string]float64
	NormScore float64
}

// msgpackHandle is configured as the RPC codec's (helper/rpcx) in what
// matters here: maps decode as map[string]any, strings as strings.
func msgpackHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.WriteExt = true
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	return h
}

func msgpackRoundTrip(t *testing.T, in, out any) {
	t.Helper()
	var b []byte
	if err := codec.NewEncoderBytes(&b, msgpackHandle()).Encode(in); err != nil {
		t.Fatalf("encode %T: %v", in, err)
	}
	if err := codec.NewDecoderBytes(b, msgpackHandle()).Decode(out); err != nil {
		t.Fatalf("decode %T into %T: %v", in, out, err)
	}
}

func TestNodeScoresKeepTheMapShapeOnTheWire(t *testing.T) {
	scores := map[string]float64{"binpack": 0.75, "job-anti-affinity": -0.5, "node-affinity": 0}
	t.Run("a map as sent before decodes into NodeScores", func(t *testing.T) {
		var got NodeScoreMeta
		msgpackRoundTrip(t, &mapNodeScoreMeta{NodeID: "n1", Scores: scores, NormScore: 0.4}, &got)
		if got.NodeID != "n1" || got.NormScore != 0.4 || !reflect.DeepEqual(got.Scores.Map(), scores) {
			t.Fatalf("got %+v (scores %v), want n1, 0.4, %v", got, got.Scores.Map(), scores)
		}
	})
	t.Run("NodeScores is sent as a map", func(t *testing.T) {
		var got mapNodeScoreMeta
		msgpackRoundTrip(t, &NodeScoreMeta{NodeID: "n1", Scores: NodeScoresFromMap(scores), NormScore: 0.4}, &got)
		if !reflect.DeepEqual(got.Scores, scores) {
			t.Fatalf("got scores %v, want %v", got.Scores, scores)
		}
	})
	t.Run("no scores stay nil", func(t *testing.T) {
		var got mapNodeScoreMeta
		msgpackRoundTrip(t, &NodeScoreMeta{NodeID: "n1"}, &got)
		if got.Scores != nil {
			t.Fatalf("got scores %#v, want nil", got.Scores)
		}
		var back NodeScoreMeta
		msgpackRoundTrip(t, &got, &back)
		if !reflect.DeepEqual(back, NodeScoreMeta{NodeID: "n1"}) {
			t.Fatalf("got %#v back", back)
		}
	})
	t.Run("a whole metric survives the trip unchanged", func(t *testing.T) {
		m := &AllocMetric{NodesEvaluated: 3, NodesAvailable: map[string]int{"dc1": 3}, ScoreMetaData: []*NodeScoreMeta{
			{NodeID: "n1", Scores: NewNodeScores([]string{"node-affinity", "binpack"}, []float64{1, 0.5}), NormScore: 0.75},
			{NodeID: "n2", Scores: NewNodeScores([]string{"binpack"}, []float64{0.25}), NormScore: 0.25},
		}}
		var got AllocMetric
		msgpackRoundTrip(t, m, &got)
		if !reflect.DeepEqual(&got, m) {
			t.Fatalf("got %#v, want %#v", &got, m)
		}
	})
}

func TestNodeScoresKeepNomadsJSONShape(t *testing.T) {
	m := &AllocMetric{ScoreMetaData: []*NodeScoreMeta{
		{NodeID: "n1", Scores: NewNodeScores([]string{"binpack", "job-anti-affinity"}, []float64{0.5, -1}), NormScore: -0.25},
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var api nomadapi.AllocationMetric
	if err := json.Unmarshal(b, &api); err != nil {
		t.Fatalf("Nomad's client cannot read %s: %v", b, err)
	}
	want := map[string]float64{"binpack": 0.5, "job-anti-affinity": -1}
	if len(api.ScoreMetaData) != 1 || !reflect.DeepEqual(api.ScoreMetaData[0].Scores, want) {
		t.Fatalf("Nomad's client read %s as %+v, want scores %v", b, api.ScoreMetaData, want)
	}
	var back AllocMetric
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, m) {
		t.Fatalf("JSON round trip: got %#v, want %#v", &back, m)
	}
}

func TestNodeScoresSetNeverWritesSharedSlices(t *testing.T) {
	a := NewNodeScores([]string{"binpack", "spread"}, []float64{1, 2})
	names := a.Names()
	b := a.ShareNames(&names)
	b.Set("binpack", 9)
	b.Set("affinity", 3)
	if got := a.Map(); !reflect.DeepEqual(got, map[string]float64{"binpack": 1, "spread": 2}) {
		t.Fatalf("setting on a sharer changed the original: %v", got)
	}
	if got := b.Map(); !reflect.DeepEqual(got, map[string]float64{"affinity": 3, "binpack": 9, "spread": 2}) {
		t.Fatalf("got %v", got)
	}
	if v, ok := b.Get("affinity"); !ok || v != 3 {
		t.Fatalf("Get(affinity) = %v, %v", v, ok)
	}
	if _, ok := b.Get("missing"); ok {
		t.Fatal("Get of a name never set reports a score")
	}
}

func TestNewNodeScoresSortsByName(t *testing.T) {
	s := NewNodeScores([]string{"spread", "binpack", "affinity"}, []float64{3, 1, 2})
	if got := s.Names(); !reflect.DeepEqual(got, []string{"affinity", "binpack", "spread"}) {
		t.Fatalf("names %v, want sorted", got)
	}
	if got := s.Map(); !reflect.DeepEqual(got, map[string]float64{"spread": 3, "binpack": 1, "affinity": 2}) {
		t.Fatalf("scores %v moved off their names", got)
	}
}

func TestCopiesOfAnAllocShareItsMetric(t *testing.T) {
	a := &Allocation{ID: "a1", Metrics: &AllocMetric{NodesEvaluated: 1}}
	if c := a.Copy(); c.Metrics != a.Metrics {
		t.Fatal("Copy made a metric of its own; metrics are shared between versions of an alloc")
	}
	if c := a.Metrics.Copy(); c == a.Metrics || !reflect.DeepEqual(c, a.Metrics) {
		t.Fatal("AllocMetric.Copy should be a deep copy")
	}
}

func TestNodeScoresShareScoresTakesOnlyTheSameBits(t *testing.T) {
	a := NewNodeScores([]string{"binpack", "spread"}, []float64{0.5, 0})
	kept := []float64{0.5, 0}
	b := a.ShareScores(kept)
	if &b.Scores()[0] != &kept[0] || !reflect.DeepEqual(b.Map(), a.Map()) {
		t.Fatalf("ShareScores did not take the kept slice: %v", b.Map())
	}
	b.Set("spread", 1)
	if kept[1] != 0 {
		t.Fatal("Set wrote to a shared scores slice")
	}
	for _, other := range [][]float64{{0.5}, {0.5, math.Copysign(0, -1)}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ShareScores(%v) of other scores did not panic", other)
				}
			}()
			a.ShareScores(other)
		}()
	}
}

package structs

import (
	"bytes"
	"encoding/json"
	"maps"
	"runtime"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/helper/rpcx"
)

// mapShape and setShape are a message holding attributes before and
// after they became Attributes, with fields around them so that a
// decoder reading too much or too little shows.
type mapShape struct {
	Name       string
	Attributes map[string]string
	After      int
}

type setShape struct {
	Name       string
	Attributes Attributes
	After      int
}

var attributeCodecCases = []struct {
	name string
	m    map[string]string
}{
	{"nil", nil},
	{"empty", map[string]string{}},
	{"one", map[string]string{"kernel.name": "linux"}},
	{"an empty key and value", map[string]string{"": "", "a": ""}},
	{"nodesim's", nodesimAttributes},
}

// canonicalHandle is rpcx.MsgpackHandle's encoding with map keys sorted:
// what the map encoder wrote, in the order Attributes write it (the map
// encoder's own order was Go's map order, which varies run to run).
func canonicalHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString, h.WriteExt, h.Canonical = true, true, true
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	return h
}

func TestAttributesMsgpackIsTheMapsEncoding(t *testing.T) {
	for _, tc := range attributeCodecCases {
		t.Run(tc.name, func(t *testing.T) {
			old := mapShape{Name: "n", Attributes: tc.m, After: 7}
			oldBytes, err := rpcx.Encode(&old)
			if err != nil {
				t.Fatal(err)
			}

			// Bytes the old code wrote (raft log, snapshots, peers)
			// decode into the same attributes, nil-ness included.
			var set setShape
			if err := rpcx.Decode(oldBytes, &set); err != nil {
				t.Fatal(err)
			}
			if set.Name != "n" || set.After != 7 || !set.Attributes.Equal(NewAttributes(tc.m)) {
				t.Fatalf("old bytes decode as %+v", set)
			}

			// What is written now decodes as the map it was.
			newBytes, err := rpcx.Encode(&setShape{Name: "n", Attributes: NewAttributes(tc.m), After: 7})
			if err != nil {
				t.Fatal(err)
			}
			var back mapShape
			if err := rpcx.Decode(newBytes, &back); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(back.Attributes, tc.m) || (back.Attributes == nil) != (tc.m == nil) || back.After != 7 {
				t.Fatalf("new bytes decode as a map %#v, want %#v", back.Attributes, tc.m)
			}

			// Byte for byte what the map encoder writes in sorted order
			// (with one key or none, its only order).
			var want []byte
			if err := codec.NewEncoderBytes(&want, canonicalHandle()).Encode(&old); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(newBytes, want) {
				t.Fatalf("encoding differs from the map's:\n got %x\nwant %x", newBytes, want)
			}
			if len(tc.m) <= 1 && !bytes.Equal(newBytes, oldBytes) {
				t.Fatalf("encoding differs from rpcx's encoding of the map:\n got %x\nwant %x", newBytes, oldBytes)
			}
		})
	}
}

// A key given twice takes its last value, as it did in a map; the set
// has each key once.
func TestAttributesMsgpackKeyGivenTwiceTakesTheLastValue(t *testing.T) {
	// {"b": "1", "a": "x", "b": "2"}
	b := []byte{0x83, 0xa1, 'b', 0xa1, '1', 0xa1, 'a', 0xa1, 'x', 0xa1, 'b', 0xa1, '2'}
	var a Attributes
	if err := rpcx.Decode(b, &a); err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := rpcx.Decode(b, &m); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(a.Map(), m) || a.Len() != 2 || a.Value("b") != "2" {
		t.Fatalf("decoded %v, the map decoder %v", a, m)
	}
}

// Decoding into a set merges the message into it, as decoding into a
// map did, without changing the set it had (stored nodes share theirs);
// msgpack nil makes it nil.
func TestAttributesMsgpackDecodeMergesIntoACopy(t *testing.T) {
	shared := NewAttributes(map[string]string{"a": "1", "b": "2"})
	msg, err := rpcx.Encode(&setShape{Attributes: AttributesOf("b", "two", "c", "3")})
	if err != nil {
		t.Fatal(err)
	}
	into := setShape{Attributes: shared}
	if err := rpcx.Decode(msg, &into); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1", "b": "two", "c": "3"}
	if !maps.Equal(into.Attributes.Map(), want) {
		t.Fatalf("merged into %v, want %v", into.Attributes, want)
	}
	if !maps.Equal(shared.Map(), map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("decoding changed the set decoded into: %v", shared)
	}
	nilMsg, err := rpcx.Encode(&mapShape{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rpcx.Decode(nilMsg, &into); err != nil || !into.Attributes.IsNil() {
		t.Fatalf("msgpack nil decoded as %v (%v)", into.Attributes, err)
	}
	// A bare set, not in a struct, reads nil too.
	bare := shared
	if err := rpcx.Decode([]byte{0xc0}, &bare); err != nil || !bare.IsNil() {
		t.Fatalf("a bare msgpack nil decoded as %v (%v)", bare, err)
	}
}

func TestAttributesJSONIsTheMapsEncoding(t *testing.T) {
	for _, tc := range attributeCodecCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(mapShape{Name: "n", Attributes: tc.m})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(setShape{Name: "n", Attributes: NewAttributes(tc.m)})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("JSON differs from the map's:\n got %s\nwant %s", got, want)
			}
			var back setShape
			if err := json.Unmarshal(want, &back); err != nil {
				t.Fatal(err)
			}
			if !back.Attributes.Equal(NewAttributes(tc.m)) {
				t.Fatalf("the map's JSON reads back as %v (nil: %v)", back.Attributes, back.Attributes.IsNil())
			}
		})
	}
}

// Nomad's API types read a node's and a node stub's attributes from
// Drover's JSON, and Drover reads them from Nomad's.
func TestAttributesJSONThroughNomadsAPITypes(t *testing.T) {
	node := &Node{ID: "n1", Name: "web-1", Attributes: NewAttributes(nodesimAttributes)}
	b, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	var api nomadapi.Node
	if err := json.Unmarshal(b, &api); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(api.Attributes, nodesimAttributes) || api.Name != "web-1" {
		t.Fatalf("Nomad's api.Node reads attributes %v", api.Attributes)
	}
	b, err = json.Marshal(node.Stub())
	if err != nil {
		t.Fatal(err)
	}
	var stub nomadapi.NodeListStub
	if err := json.Unmarshal(b, &stub); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(stub.Attributes, nodesimAttributes) || stub.Address != "127.0.0.1" || stub.Version != "nodesim" {
		t.Fatalf("Nomad's api.NodeListStub reads attributes %v, address %q, version %q", stub.Attributes, stub.Address, stub.Version)
	}
	b, err = json.Marshal(&api)
	if err != nil {
		t.Fatal(err)
	}
	var back Node
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Attributes.Equal(node.Attributes) {
		t.Fatalf("Nomad's JSON reads back as %v", back.Attributes)
	}
}

// The node a client registers survives RPC and the raft log: every field,
// attributes among them.
func TestNodeWithAttributesSurvivesMsgpack(t *testing.T) {
	node := &Node{ID: "n1", Name: "web-1", TLSEnabled: true, Drain: true, Attributes: NewAttributes(nodesimAttributes),
		Meta: map[string]string{"rack": "r1"}, ModifyIndex: 9}
	b, err := rpcx.Encode(node)
	if err != nil {
		t.Fatal(err)
	}
	var back Node
	if err := rpcx.Decode(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Attributes.Equal(node.Attributes) || !back.TLSEnabled || !back.Drain || back.ModifyIndex != 9 || back.Meta["rack"] != "r1" {
		t.Fatalf("decoded %+v", back)
	}
}

var sinkAttributes Attributes

// BenchmarkAttributesMsgpack measures encoding and decoding a node's
// attributes, as a server does for every registration it applies.
func BenchmarkAttributesMsgpack(b *testing.B) {
	a := NewAttributes(nodesimAttributes)
	enc, err := rpcx.Encode(&a)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := rpcx.Encode(&a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var out Attributes
			if err := rpcx.Decode(enc, &out); err != nil {
				b.Fatal(err)
			}
			sinkAttributes = out
		}
	})
}

// The encoder's slice pool starts empty (and empties at every other GC):
// the empty set must still be written as an empty map, not as nil.
func TestAttributesEmptySetEncodesAsAnEmptyMapWithAFreshPool(t *testing.T) {
	for range 3 {
		runtime.GC()
		runtime.GC() // a pool's items survive one GC, in its victim cache
		b, err := rpcx.Encode(&setShape{Name: "n", Attributes: NewAttributes(map[string]string{}), After: 7})
		if err != nil {
			t.Fatal(err)
		}
		var back mapShape
		if err := rpcx.Decode(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Attributes == nil {
			t.Fatal("the empty set was written as nil")
		}
	}
}

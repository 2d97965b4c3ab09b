package rpcx

import (
	"bytes"
	"errors"
	"maps"
	"net/rpc"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/structs"
)

// emptyStructs is a message body that claims n allocations, each an empty
// map: one byte on the wire, a whole structs.Allocation once decoded.
func emptyStructs(field string, n int) []byte {
	b := []byte{0x81, 0xa0 | byte(len(field))}
	b = append(b, field...)
	b = append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, bytes.Repeat([]byte{0x80}, n)...)
}

// Bug found by FuzzRPCRequest (nomad): the frame scanner kept every length
// prefix honest, but a message whose bytes each decode into something large
// still multiplied its size. Node.UpdateAlloc's argument holds a slice of
// *Allocation, and each 1-byte empty map in it became a 448-byte
// Allocation: a 16 MiB request, which anyone who can reach the RPC port
// may send, made the server allocate over 7 GiB.
func TestDecodeRefusesAMessageThatDecodesIntoHundredsOfTimesItsSize(t *testing.T) {
	body := emptyStructs("Alloc", 1<<20)

	before := totalAlloc()
	var req structs.AllocUpdateRequest
	err := Decode(body, &req)
	if !errors.Is(err, ErrMalformedMessage) || !strings.Contains(err.Error(), "would take more than") {
		t.Fatalf("Decode: want ErrMalformedMessage saying what decoding would take, got %v", err)
	}
	if len(req.Alloc) != 0 {
		t.Fatalf("Decode decoded %d allocations before refusing", len(req.Alloc))
	}

	// The server's read path: the body is refused, and the stream stays
	// usable for the next request.
	hdr, err := Encode(&rpc.Request{ServiceMethod: "Node.UpdateAlloc", Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	next := append(append([]byte{}, hdr...), mustEncode(t, &structs.AllocUpdateRequest{UpdatedAt: 7})...)
	stream := append(append(append([]byte{}, hdr...), body...), next...)
	c := newMsgCodec(readOnly{bytes.NewReader(stream)}, DefaultMaxMessageSize)
	var h rpc.Request
	if err := c.ReadRequestHeader(&h); err != nil {
		t.Fatal(err)
	}
	if err := c.ReadRequestBody(&structs.AllocUpdateRequest{}); !errors.Is(err, ErrMalformedMessage) {
		t.Fatalf("ReadRequestBody: want ErrMalformedMessage, got %v", err)
	}
	var ok structs.AllocUpdateRequest
	if err := c.ReadRequestHeader(&h); err != nil {
		t.Fatalf("the stream is out of step after a refused body: %v", err)
	}
	if err := c.ReadRequestBody(&ok); err != nil || ok.UpdatedAt != 7 {
		t.Fatalf("the request after a refused body: %+v, %v", ok, err)
	}
	if grew := totalAlloc() - before; grew > 64<<20 {
		t.Fatalf("refusing a %d KiB message allocated %d MiB", len(body)>>10, grew>>20)
	}
}

// manyAttributes is a node registration whose attributes claim n
// entries of empty keys and values: two bytes each on the wire.
func manyAttributes(n int) []byte {
	b := []byte{0x81, 0xa4, 'N', 'o', 'd', 'e', 0x81, 0xaa}
	b = append(b, "Attributes"...)
	b = append(b, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, bytes.Repeat([]byte{0xa0, 0xa0}, n)...)
}

// A node's attributes are kept as sorted slices, not the map they are
// sent as (structs.Attributes decodes itself); the estimate still charges
// them as the map, so a registration of millions of attributes is
// refused as it was, before anything is decoded, and a real one is not.
func TestDecodeCostChargesNodeAttributesAsTheMapTheyAreSentAs(t *testing.T) {
	var mapShaped struct {
		Node *struct{ Attributes map[string]string }
	}
	mapBody := manyAttributes(1 << 20)
	if err := Decode(mapBody, &mapShaped); !errors.Is(err, ErrMalformedMessage) || !strings.Contains(err.Error(), "would take more than") {
		t.Fatalf("the map-shaped message: want the cost refusal, got %v", err)
	}
	req := structs.NodeRegisterRequest{NodeEvent: &structs.NodeEvent{Message: "kept"}}
	err := Decode(mapBody, &req)
	if !errors.Is(err, ErrMalformedMessage) || !strings.Contains(err.Error(), "would take more than") {
		t.Fatalf("want ErrMalformedMessage saying what decoding would take, got %v", err)
	}
	if req.Node != nil || req.NodeEvent == nil || req.NodeEvent.Message != "kept" {
		t.Fatalf("a refused registration changed the request: %+v", req)
	}
	mapCost, err1 := decodeCost(mapBody, reflect.TypeOf(mapShaped), 1<<62)
	setCost, err2 := decodeCost(mapBody, reflect.TypeOf(req), 1<<62)
	if err1 != nil || err2 != nil || setCost < mapCost {
		t.Fatalf("attributes are charged %d, the map %d (%v, %v)", setCost, mapCost, err1, err2)
	}

	// A real node's attributes decode, a key given twice once.
	ok := manyAttributes(200)
	if err := Decode(ok, &req); err != nil || req.Node == nil || req.Node.Attributes.Len() != 1 {
		t.Fatalf("200 entries of one key: %v, %+v", err, req.Node)
	}
}

// A large legitimate message still decodes: the check refuses shapes, not
// sizes.
func TestDecodeCostAcceptsLargeRealMessages(t *testing.T) {
	job := &structs.Job{ID: "web", Name: "web", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec",
			Config:    map[string]any{"command": "/bin/sleep", "args": []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}},
	}}}
	job.Canonicalize()
	when := time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	var req structs.AllocUpdateRequest
	for i := range 5000 {
		req.Alloc = append(req.Alloc, &structs.Allocation{ID: structs.GenerateUUID(), Job: job, TaskGroup: "web",
			ClientStatus: structs.AllocClientStatusRunning, Name: structs.AllocName("web", "web", i),
			AllocStates: []*structs.AllocState{{Field: structs.AllocStateFieldClientStatus, Value: "running", Time: when}},
			TaskStates:  map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning, StartedAt: when}}})
	}
	b := mustEncode(t, &req)
	if len(b) < DefaultMaxMessageSize/4 {
		t.Fatalf("the message is only %d KiB; make it larger so it tests the factor, not the slack", len(b)>>10)
	}
	var got structs.AllocUpdateRequest
	if err := Decode(b, &got); err != nil {
		t.Fatalf("a %d MiB message of real allocations: %v", len(b)>>20, err)
	}
	if len(got.Alloc) != len(req.Alloc) {
		t.Fatalf("decoded %d allocations, sent %d", len(got.Alloc), len(req.Alloc))
	}
}

func TestDecodeCostRefusesShapesDroverNeverSends(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		out  any
		want string
	}{
		{"a struct as an array of its fields", []byte{0x91, 0xa1, 'x'}, &EchoArgs{}, "sent as a map of its fields"},
		{"a field name that is a number", []byte{0x81, 0x01, 0x02}, &EchoArgs{}, "field name"},
		{"a zero-length extension in an interface", []byte{0x92, 0xc7, 0x00, 0x05, 0x01}, new(any), "an extension (type 5) where any value may go"},
		{"a timestamp in an interface", []byte{0xd6, 0xff, 0, 0, 0, 1}, new(any), "an extension (type -1) where any value may go"},
		{"a zero-length extension in an unknown field", []byte{0x81, 0xa1, 'z', 0xc7, 0x00, 0x05}, &EchoArgs{}, "zero-length extension"},
		// structs.Attributes reads its pairs into a slice, which
		// go-msgpack fills from an array as well as a map; a map never
		// took an array, and the estimate charges a map.
		{"a node's attributes as an array", append(append([]byte{0x81, 0xa4, 'N', 'o', 'd', 'e', 0x81, 0xaa}, "Attributes"...), 0x92, 0xa1, 'k', 0xa1, 'v'),
			&structs.NodeRegisterRequest{}, "sent as a map, not an array"},
		{"a map as an array", append(append([]byte{0x81, 0xa4, 'N', 'o', 'd', 'e', 0x81, 0xa4}, "Meta"...), 0x92, 0xa1, 'k', 0xa1, 'v'),
			&structs.NodeRegisterRequest{}, "sent as a map, not an array"},
		// Found by FuzzCodec (testdata/fuzz/FuzzCodec/332cf0d3d809b3a8 and
		// 2a4aee0489705726): a map key given twice made go-msgpack decode
		// the second value into the raw extension the first one left,
		// keeping a 2-byte timestamp, or an empty extension, whose encoding
		// no longer decodes, so the request could not be forwarded or
		// written to the raft log.
		{"a timestamp of the wrong length under a key given twice",
			[]byte{0x82, 0xa1, 'k', 0xd5, 0x30, 0x00, 0x00, 0xa1, 'k', 0xd5, 0xff, 0x30, 0xa3}, new(any), "an extension (type 48)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Decode(tc.in, tc.out)
			if !errors.Is(err, ErrMalformedMessage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want ErrMalformedMessage containing %q, got %v", tc.want, err)
			}
		})
	}
}

// decodeCostRoots are the types whose values cross the wire, from which
// every struct type the servers decode is reachable.
var decodeCostRoots = []any{
	structs.JobRegisterRequest{}, structs.JobPlanRequest{}, structs.JobDispatchRequest{}, structs.JobScaleRequest{},
	structs.NodeRegisterRequest{}, structs.NodeUpdateStatusRequest{}, structs.NodeUpdateDrainRequest{},
	structs.AllocUpdateRequest{}, structs.AllocsGetResponse{}, structs.NodeClientAllocsResponse{},
	structs.EvalUpdateRequest{}, structs.EvalDequeueResponse{}, structs.PlanRequest{}, structs.PlanResponse{},
	structs.ApplyPlanResultsRequest{}, structs.JobBatchDeregisterRequest{}, structs.SchedulerSetConfigRequest{},
	structs.DeploymentStatusUpdateRequest{}, structs.JobScaleApplyRequest{}, structs.JobDispatchApplyRequest{},
	structs.JobPlanResponse{}, structs.JobVersionsResponse{},
}

// reachableStructs returns every struct type reachable from the roots.
func reachableStructs() []reflect.Type {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			if seen[t] || t == timeType {
				return
			}
			seen[t] = true
			for i := range t.NumField() {
				walk(t.Field(i).Type)
			}
		}
	}
	for _, r := range decodeCostRoots {
		walk(reflect.TypeOf(r))
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b reflect.Type) int { return strings.Compare(a.String(), b.String()) })
}

// The estimate finds fields by the names go-msgpack gives them; a field it
// did not know would be skipped as free. For every struct the servers
// decode, its names are exactly the keys go-msgpack writes.
func TestDecodeCostKnowsEveryFieldByItsWireName(t *testing.T) {
	types := reachableStructs()
	if len(types) < 40 {
		t.Fatalf("only %d struct types reachable from the roots; the walk is broken", len(types))
	}
	for _, typ := range types {
		b := mustEncode(t, reflect.New(typ).Interface())
		var wire map[string]any
		if err := Decode(b, &wire); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		got := slices.Sorted(maps.Keys(planFor(typ).fields))
		want := slices.Sorted(maps.Keys(wire))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the estimate knows fields %q, go-msgpack writes %q", typ, got, want)
		}
	}
}

// For values of every root type, with every field drawn, the estimate is
// at least what decoding really allocates (so the check cannot be slipped
// past) and within the budget (so no real message is refused). Each
// value is sent 50 times in one message, so that what is measured is the
// value, not the decoder's fixed costs.
func TestDecodeCostBoundsWhatDecodingAllocates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		elem := reflect.TypeOf(rapid.SampledFrom(decodeCostRoots).Draw(t, "type"))
		one := fuzzseed.Value(t, elem)
		typ := reflect.SliceOf(elem)
		many := reflect.MakeSlice(typ, 0, 50)
		for range 50 {
			many = reflect.Append(many, one)
		}
		b, err := Encode(many.Interface())
		if err != nil {
			t.Fatal(err)
		}
		estimate, err := decodeCost(b, typ, 1<<62)
		if err != nil {
			t.Fatalf("estimating %s: %v", typ, err)
		}
		// Even values as dense as these (empty keys and maps, zero numbers),
		// which real ones are not, need under half the factor; the slack
		// is not needed to accept them.
		if limit := decodeCostFactor * uint64(len(b)); estimate > limit {
			t.Fatalf("a real %s of %d bytes is estimated at %d, more than the factor allows (%d)", typ, len(b), estimate, limit)
		}
		// The first decode of a type builds go-msgpack's and the walk's
		// tables for it; measure the second.
		if err := Decode(b, reflect.New(typ).Interface()); err != nil {
			t.Fatalf("decoding %s: %v", typ, err)
		}
		before := fuzzseed.AllocatedBytes()
		if err := Decode(b, reflect.New(typ).Interface()); err != nil {
			t.Fatalf("decoding %s: %v", typ, err)
		}
		// The decoder's own state is not part of the value; 16 KiB covers it.
		if used := fuzzseed.AllocatedBytes() - before; used > estimate+16<<10 {
			t.Fatalf("decoding %d bytes into %s allocated %d bytes, estimated %d", len(b), typ, used, estimate)
		}
	})
}

// A node's attributes with a key given twice decode into no more than
// distinct ones, and so no more than the map the estimate charges: the
// duplicate is dropped in the decoder's scratch, not after making the
// set's slices.
func TestDecodeCostBoundsAttributesWithRepeatedKeys(t *testing.T) {
	const n = 60_000
	decode := func(repeat bool) (used, estimate uint64) {
		t.Helper()
		b := []byte{0x81, 0xa4, 'N', 'o', 'd', 'e', 0x81, 0xaa}
		b = append(b, "Attributes"...)
		b = append(b, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n&0xff))
		for i := range n {
			k := i
			if repeat && i == n-1 {
				k = 0 // the last key repeats the first
			}
			b = append(b, 0xa3, 'k', byte(k>>8), byte(k), 0xa1, 'v')
		}
		estimate, err := decodeCost(b, reflect.TypeFor[structs.NodeRegisterRequest](), 1<<62)
		if err != nil {
			t.Fatal(err)
		}
		var req structs.NodeRegisterRequest
		if err := Decode(b, &req); err != nil { // the first builds the tables
			t.Fatal(err)
		}
		req = structs.NodeRegisterRequest{}
		before := fuzzseed.AllocatedBytes()
		if err := Decode(b, &req); err != nil {
			t.Fatal(err)
		}
		used = fuzzseed.AllocatedBytes() - before
		if want := n - btoi(repeat); req.Node.Attributes.Len() != want {
			t.Fatalf("decoded %d attributes, want %d", req.Node.Attributes.Len(), want)
		}
		return used, estimate
	}
	distinct, _ := decode(false)
	repeated, estimate := decode(true)
	if repeated > distinct+16<<10 || repeated > estimate {
		t.Fatalf("with a key given twice decoding allocated %d bytes, with distinct keys %d; estimated %d", repeated, distinct, estimate)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Node scores decode themselves through a map[string]float64; the
// estimate charges them as that map, not as a struct whose keys are all
// unknown fields (which cost nothing).
func TestDecodeCostChargesNodeScoresAsTheirMap(t *testing.T) {
	m := make(map[string]float64, 1000)
	for i := range 1000 {
		m[strconv.Itoa(i)] = float64(i)
	}
	b := mustEncode(t, m)
	asMap, err1 := decodeCost(b, reflect.TypeFor[map[string]float64](), 1<<62)
	asScores, err2 := decodeCost(b, reflect.TypeFor[structs.NodeScores](), 1<<62)
	if err1 != nil || err2 != nil || asScores < asMap {
		t.Fatalf("scores are charged %d, the map %d (%v, %v)", asScores, asMap, err1, err2)
	}
}

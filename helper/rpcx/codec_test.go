package rpcx

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name  string
	Count *int
}

type roundTrip struct {
	When     time.Time
	Zero     time.Time
	Timeout  time.Duration
	Labels   map[string]string
	Meta     map[string]any
	Inner    *inner
	Nested   **inner
	Nil      *inner
	Blob     []byte
	Empty    []byte
	List     []*inner
	Signed   int64
	Unsigned uint64
	Float    float64
	Flag     bool
}

func TestEncodeDecodeRoundTripsStructs(t *testing.T) {
	seven := 7
	in := &inner{Name: "deep", Count: &seven}
	want := roundTrip{
		When:     time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.UTC),
		Timeout:  90*time.Second + 7*time.Nanosecond,
		Labels:   map[string]string{"a": "b", "": "empty key"},
		Meta:     map[string]any{"s": "str", "nested": map[string]any{"x": "y"}, "list": []any{"a", "b"}},
		Inner:    &inner{Name: "in", Count: &seven},
		Nested:   &in,
		Blob:     bytes.Repeat([]byte{0, 1, 2, 0xff}, 100_000),
		Empty:    []byte{},
		List:     []*inner{{Name: "one"}, nil, {Name: "three", Count: &seven}},
		Signed:   -1 << 62,
		Unsigned: 1<<64 - 1,
		Float:    3.25,
		Flag:     true,
	}
	b, err := Encode(&want)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	var got roundTrip
	if err := Decode(b, &got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("round trip changed the value:\nwant %#v\ngot  %#v", want, got)
	}
}

func TestTimeKeepsInstantAndOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   time.Time
	}{
		{"UTC with nanoseconds", time.Date(2030, 1, 2, 3, 4, 5, 999999999, time.UTC)},
		{"local time", time.Date(2001, 9, 9, 1, 46, 40, 1, time.Local)},
		{"a fixed zone east of UTC", time.Date(2024, 6, 1, 12, 0, 0, 0, time.FixedZone("X", 5*3600+1800))},
		{"before 1970", time.Date(1901, 12, 13, 20, 45, 52, 0, time.UTC)},
		{"the zero time", time.Time{}},
		{"now, with a monotonic reading", time.Now()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Encode(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got time.Time
			if err := Decode(b, &got); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.in) {
				t.Errorf("instant changed: want %v, got %v", tc.in, got)
			}
			_, wantOff := tc.in.Zone()
			_, gotOff := got.Zone()
			if wantOff != gotOff {
				t.Errorf("zone offset changed: want %d, got %d", wantOff, gotOff)
			}
			// UTC and Local come back as the same *Location, so the value
			// is identical; other zones keep their offset but not their name.
			if loc := tc.in.Location(); loc == time.UTC || loc == time.Local {
				if want := tc.in.Round(0); got != want {
					t.Errorf("want identical value %#v, got %#v", want, got)
				}
			}
		})
	}
}

func TestDecodeIntoInterfaceGivesStringsAndStringMaps(t *testing.T) {
	b, err := Encode(map[string]any{"name": "web", "tags": map[string]any{"a": "b"}, "blob": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	m, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("want map[string]any, got %T", got)
	}
	if _, ok := m["name"].(string); !ok {
		t.Errorf("a string decoded as %T", m["name"])
	}
	if _, ok := m["tags"].(map[string]any); !ok {
		t.Errorf("a nested map decoded as %T", m["tags"])
	}
}

func TestDecodeDoesNotAliasInput(t *testing.T) {
	b, err := Encode(EchoArgs{Data: []byte("hello"), Msg: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var got EchoArgs
	if err := Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if string(got.Data) != "hello" || got.Msg != "m" {
		t.Fatalf("decoded value changed with its input: %+v", got)
	}
}

func TestDecodeRejectsMalformedInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty input", nil},
		{"a reserved type byte", []byte{0xc1}},
		{"a truncated string", []byte{0xa5, 'a', 'b'}},
		{"an array claiming 4 GiB elements", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}},
		{"a binary claiming 4 GiB", []byte{0xc6, 0xff, 0xff, 0xff, 0xff, 1, 2}},
		{"a time extension claiming 4 GiB", []byte{0xc9, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"nesting deeper than allowed", bytes.Repeat([]byte{0x91}, 100_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := totalAlloc()
			var args EchoArgs
			if err := Decode(tc.in, &args); err == nil {
				t.Errorf("decoding into a struct: want an error")
			}
			var v any
			if err := Decode(tc.in, &v); err == nil {
				t.Errorf("decoding into interface{}: want an error")
			}
			var ints []int
			if err := Decode(tc.in, &ints); err == nil && len(tc.in) > 0 && tc.in[0] != 0x91 {
				t.Errorf("decoding into []int: want an error")
			}
			if grew := totalAlloc() - before; grew > 64<<20 {
				t.Errorf("decoding allocated %d MiB", grew>>20)
			}
		})
	}
}

// Bug found by FuzzCodec (testdata/fuzz/FuzzCodec/65086e03d8c42b05):
// Decode checked that its input began with a well-formed value and ignored
// whatever followed. go-msgpack decodes a zero-length extension into an
// interface by reading the next value as the extension's content, so
// "ext16 of length 0, then a byte" decoded, swallowing the trailing byte,
// into a value whose own encoding (the extension alone) no longer decodes.
// A raft entry is exactly one value: anything after it is corruption.
func TestDecodeRefusesBytesAfterTheValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"a zero-length extension and the byte it would swallow", []byte{0xc8, 0x00, 0x00, 0x30, 0x30}},
		{"a string and a stray byte", []byte{0xa1, 'a', 0x01}},
		{"two values", append(mustEncode(t, EchoArgs{Msg: "one"}), mustEncode(t, EchoArgs{Msg: "two"})...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			err := Decode(tc.in, &v)
			if !errors.Is(err, ErrMalformedMessage) || !strings.Contains(err.Error(), "after the value") {
				t.Fatalf("want ErrMalformedMessage naming the bytes after the value, got %v (decoded %#v)", err, v)
			}
		})
	}
}

func mustEncode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTimesInsideCollectionsRoundTrip(t *testing.T) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)
	type times struct {
		List []time.Time
		ByID map[string]time.Time
		Ptr  *time.Time
	}
	want := times{List: []time.Time{when, {}}, ByID: map[string]time.Time{"a": when}, Ptr: &when}
	b, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	var got times
	if err := Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("want %#v, got %#v", want, got)
	}
}

func TestEncodeReportsEncoderErrors(t *testing.T) {
	// msgpack has no complex numbers.
	if _, err := Encode(map[string]any{"bad": complex(1, 2)}); err == nil {
		t.Fatal("want an error")
	}
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

func TestJSONHiddenFieldsStillCrossTheWire(t *testing.T) {
	type node struct {
		ID       string
		SecretID string `json:"-"`
	}
	b, err := Encode(&node{ID: "n", SecretID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var out node
	if err := Decode(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.SecretID != "s" {
		t.Fatal(`a json:"-" field must still be encoded in msgpack`)
	}
}

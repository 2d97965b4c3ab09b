package rpcx

import (
	"bytes"
	"errors"
	"io"
	"net/rpc"
	"testing"
	"time"
)

// frameSamples are values covering every msgpack type family.
func frameSamples() []any {
	return []any{
		nil, true, false,
		0, 127, 128, 1 << 15, 1 << 31, uint64(1<<64 - 1),
		-1, -32, -33, -1 << 15, -1 << 31, int64(-1 << 63),
		float32(1.5), 2.25,
		"", "short", string(bytes.Repeat([]byte("s"), 300)), string(bytes.Repeat([]byte("s"), 70_000)),
		[]byte{}, []byte("bin"), bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{1}, 70_000),
		[]any{}, []any{1, "a", []any{nil}}, make([]int, 20), make([]int, 70_000),
		map[string]any{}, map[string]any{"a": map[string]any{"b": []any{1}}},
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		rpc.Request{ServiceMethod: "Test.Echo", Seq: 99},
		EchoArgs{Msg: "m", Data: []byte("d"), N: -5},
	}
}

func TestFrameScannerSplitsValuesExactly(t *testing.T) {
	var stream []byte
	var encoded [][]byte
	for _, v := range frameSamples() {
		b, err := Encode(v)
		if err != nil {
			t.Fatalf("encode %T: %v", v, err)
		}
		encoded = append(encoded, b)
		stream = append(stream, b...)
	}
	// Hand-made extension values, which Encode never produces.
	for _, b := range [][]byte{
		{0xd4, 5, 1}, {0xd5, 5, 1, 2}, {0xd6, 5, 1, 2, 3, 4},
		{0xd7, 5, 1, 2, 3, 4, 5, 6, 7, 8}, append([]byte{0xd8, 5}, make([]byte, 16)...),
		{0xc7, 2, 5, 1, 2}, {0xc8, 0, 2, 5, 1, 2}, {0xc9, 0, 0, 0, 2, 5, 1, 2},
	} {
		encoded = append(encoded, b)
		stream = append(stream, b...)
	}

	f := newFrameScanner(bytes.NewReader(stream), 1<<20)
	for i, want := range encoded {
		f.startMessage()
		got, err := f.next()
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("value %d: scanned % x..., want % x...", i, head(got), head(want))
		}
	}
	if _, err := f.next(); err != io.EOF {
		t.Fatalf("at the end of the stream: want io.EOF, got %v", err)
	}
}

func TestFrameScannerRefusesBeforeReading(t *testing.T) {
	const limit = 1024
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"a string claiming more than the limit", []byte{0xdb, 0, 0, 0x10, 0}, ErrMessageTooLarge},
		{"a binary claiming 4 GiB", []byte{0xc6, 0xff, 0xff, 0xff, 0xff}, ErrMessageTooLarge},
		{"a time extension claiming 4 GiB", []byte{0xc9, 0xff, 0xff, 0xff, 0xff, 0xff}, ErrMessageTooLarge},
		{"an array claiming 4 Gi elements", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, ErrMessageTooLarge},
		{"a map claiming 4 Gi entries", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, ErrMessageTooLarge},
		{"arrays nested too deep", bytes.Repeat([]byte{0x91}, maxNesting+2), ErrMalformedMessage},
		{"the reserved type byte", []byte{0x92, 0x01, 0xc1}, ErrMalformedMessage},
		{"a value cut short", []byte{0x92, 0xa3, 'a'}, io.ErrUnexpectedEOF},
		{"a length field cut short", []byte{0xdb, 0}, io.ErrUnexpectedEOF},
		{"an empty stream", nil, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No payload follows the claims: a scanner that tried to read
			// it would report io.ErrUnexpectedEOF instead.
			f := newFrameScanner(bytes.NewReader(tc.in), limit)
			_, err := f.next()
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if _, again := f.next(); again != err {
				t.Fatalf("the error is not sticky: then %v, now %v", err, again)
			}
		})
	}
}

func TestCheckValueRefusesClaimsTheInputCannotBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"an empty input", nil, io.ErrUnexpectedEOF},
		{"a binary claiming 4 GiB", []byte{0xc6, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}, io.ErrUnexpectedEOF},
		{"an array claiming more elements than bytes left", []byte{0x9f, 1, 2, 3}, io.ErrUnexpectedEOF},
		{"a string one byte short", []byte{0xa3, 'a', 'b'}, io.ErrUnexpectedEOF},
		{"a length field cut short", []byte{0xcd, 1}, io.ErrUnexpectedEOF},
		{"arrays nested too deep", bytes.Repeat([]byte{0x91}, 10*maxNesting), ErrMalformedMessage},
		{"the reserved type byte", []byte{0xc1}, ErrMalformedMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkValue(tc.in)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrMalformedMessage) {
				t.Fatalf("want ErrMalformedMessage and %v, got %v", tc.want, err)
			}
		})
	}
	for _, v := range frameSamples() {
		b, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkValue(b); err != nil {
			t.Fatalf("checkValue refused an encoded %T: %v", v, err)
		}
	}
}

func TestFrameScannerSharesTheLimitBetweenHeaderAndBody(t *testing.T) {
	half, err := Encode(string(bytes.Repeat([]byte("x"), 600)))
	if err != nil {
		t.Fatal(err)
	}
	stream := bytes.Repeat(half, 4)
	f := newFrameScanner(bytes.NewReader(stream), 1000)

	f.startMessage()
	if _, err := f.next(); err != nil {
		t.Fatalf("header: %v", err)
	}
	if _, err := f.next(); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("a body that takes the message past the limit: want ErrMessageTooLarge, got %v", err)
	}

	f = newFrameScanner(bytes.NewReader(stream), 1300)
	for i := range 2 {
		f.startMessage()
		for part := range 2 {
			if _, err := f.next(); err != nil {
				t.Fatalf("message %d part %d: %v", i, part, err)
			}
		}
	}
}

func TestFrameScannerAllocatesOnlyWhatArrives(t *testing.T) {
	// A 15 MiB claim with 10 bytes behind it.
	in := append([]byte{0xc6, 0x00, 0xf0, 0x00, 0x00}, make([]byte, 10)...)
	f := newFrameScanner(bytes.NewReader(in), DefaultMaxMessageSize)
	before := totalAlloc()
	if _, err := f.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("want io.ErrUnexpectedEOF, got %v", err)
	}
	if grew := totalAlloc() - before; grew > 1<<20 {
		t.Fatalf("scanning a truncated claim allocated %d KiB", grew>>10)
	}
}

// readOnly adapts a reader to the codec's io.ReadWriteCloser.
type readOnly struct{ io.Reader }

func (readOnly) Write(p []byte) (int, error) { return len(p), nil }
func (readOnly) Close() error                { return nil }

func head(b []byte) []byte {
	return b[:min(len(b), 16)]
}

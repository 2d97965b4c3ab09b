package rpcx

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestValueReaderReadsAStreamOfValues(t *testing.T) {
	var stream []byte
	for _, v := range []any{EchoArgs{Msg: "one", N: 1}, 7, "three"} {
		stream = append(stream, mustEncode(t, v)...)
	}
	r := NewValueReader(bytes.NewReader(stream), 0)
	var a EchoArgs
	var n int
	var s string
	for _, out := range []any{&a, &n, &s} {
		if err := r.Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	if a.Msg != "one" || a.N != 1 || n != 7 || s != "three" {
		t.Fatalf("read %+v, %d, %q", a, n, s)
	}
	if err := r.Decode(&s); err != io.EOF {
		t.Fatalf("at the end of the stream: want io.EOF itself, got %v", err)
	}
}

func TestValueReaderRefusesClaimsBeforeAllocating(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"a slice claiming 16M elements that never come", []byte{0x81, 0xa4, 'D', 'a', 't', 'a', 0xdd, 0x00, 0xff, 0xff, 0xff}, ErrMessageTooLarge},
		{"a value over the limit", append([]byte{0xc6, 0x00, 0x10, 0x00, 0x00}, make([]byte, 1<<20)...), ErrMessageTooLarge},
		{"a value cut short", []byte{0x82, 0xa3, 'M', 's', 'g'}, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := totalAlloc()
			var a EchoArgs
			err := NewValueReader(bytes.NewReader(tc.in), 64<<10).Decode(&a)
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if grew := totalAlloc() - before; grew > 4<<20 {
				t.Fatalf("refusing it allocated %d MiB", grew>>20)
			}
		})
	}
}

package rpcx

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// shrinkCounter is a stream that counts the Shrink calls a yamux stream
// would get.
type shrinkCounter struct {
	io.Reader
	shrinks atomic.Int32
}

func (s *shrinkCounter) Shrink() { s.shrinks.Add(1) }

// An idle stream holds no read buffer: between messages the reader and the
// message buffer go back to their pools and the stream is told to drop its
// own, and the next message still arrives whole, including a first byte
// that a peek consumed while the stream was idle.
func TestStreamSourceHoldsNothingWhileIdle(t *testing.T) {
	pr, pw := io.Pipe()
	stream := &shrinkCounter{Reader: pr}
	f := newFrameScanner(stream, 1<<20)

	msgs := []any{EchoArgs{Msg: "one", N: 1}, "two", EchoArgs{Msg: string(bytes.Repeat([]byte("x"), 5000)), N: 3}}
	for i, v := range msgs {
		want, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		f.startMessage()
		if f.src.br != nil || f.src.buf != nil || f.src.bufp != nil {
			t.Fatalf("message %d: an idle source still holds a reader (%v) or a buffer (cap %d)", i, f.src.br != nil, cap(f.src.buf))
		}
		if got := stream.shrinks.Load(); got != int32(i+1) {
			t.Fatalf("message %d: the stream was asked to shrink %d times, want %d", i, got, i+1)
		}
		go func() { pw.Write(want) }()
		if i == 1 {
			// The slot waiter's peek: it waits for a byte without a buffer.
			if err := f.peek(); err != nil {
				t.Fatalf("peek: %v", err)
			}
			if !f.src.has || f.src.br != nil {
				t.Fatalf("peek should hold its byte without taking a reader: has=%v reader=%v", f.src.has, f.src.br != nil)
			}
		}
		got, err := f.next()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("message %d: scanned % x..., want % x...", i, head(got), head(want))
		}
	}
	pw.Close()
	f.startMessage()
	if _, err := f.next(); err != io.EOF {
		t.Fatalf("after the peer closed: %v, want io.EOF", err)
	}
}

// Bytes that arrive one at a time, with a message boundary anywhere, are
// framed exactly as a stream that delivers them all at once.
func TestStreamSourceOneByteAtATime(t *testing.T) {
	var stream []byte
	var encoded [][]byte
	for _, v := range frameSamples() {
		b, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, b)
		stream = append(stream, b...)
	}
	f := newFrameScanner(iotest.OneByteReader(bytes.NewReader(stream)), 1<<20)
	for i, want := range encoded {
		f.startMessage()
		if i%3 == 0 {
			if err := f.peek(); err != nil {
				t.Fatalf("value %d: peek: %v", i, err)
			}
		}
		got, err := f.next()
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("value %d: scanned % x..., want % x...", i, head(got), head(want))
		}
	}
	f.startMessage()
	if _, err := f.next(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

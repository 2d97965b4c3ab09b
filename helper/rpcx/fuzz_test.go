package rpcx

import (
	"bytes"
	"errors"
	"io"
	"net/rpc"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-sched/drover/helper/fuzzseed"
)

// fuzzMessageLimit is the message size limit of the codecs under fuzzing:
// small, so that inputs cross it often.
const fuzzMessageLimit = 64 << 10

// codecAllocBudget bounds what reading an input as a stream of messages may
// allocate: the codec's buffers (including one readChunk, which the frame
// scanner may take for a payload before it arrives, and what go-msgpack
// allocates afresh under the race detector, which empties sync.Pools), and
// the values decoded into the types the target uses (EchoArgs, any,
// time.Time). An empty map decoded into an interface costs the most per
// byte, about a hundred and fifty; what the real request types cost is
// FuzzRPCRequest's concern (nomad package).
func codecAllocBudget(inputLen int) uint64 {
	return readChunk + 128<<10 + 256*uint64(inputLen)
}

// FuzzCodec feeds arbitrary bytes to the server side of the codec and to
// Decode, the way a hostile peer or a corrupt raft entry would. Whatever
// the bytes:
//
//   - nothing panics, and reading them allocates at most codecAllocBudget,
//     however much a length prefix claims;
//   - the frame scanner neither drops nor invents bytes: the frames it
//     returns are the input's prefix, each one well formed (checkValue
//     agrees), and the decoder, given a frame, reads exactly that frame or
//     fails;
//   - the stream scanner and checkValue agree on whether the input starts
//     with a well-formed value;
//   - a value that decodes is a fixed point: encoding it and decoding again
//     gives the same value, so what a server forwards is what it received.
func FuzzCodec(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	canon := canonicalHandle()
	f.Fuzz(func(t *testing.T, data []byte) {
		before := fuzzseed.AllocatedBytes()
		readAsServer(data)
		if used, budget := fuzzseed.AllocatedBytes()-before, codecAllocBudget(len(data)); used > budget {
			t.Fatalf("reading %d bytes as requests allocated %d KiB, more than the %d KiB budget",
				len(data), used>>10, budget>>10)
		}

		// Frame by frame: the frames tile a prefix of the input.
		scanner := newFrameScanner(bytes.NewReader(data), fuzzMessageLimit)
		offset := 0
		for {
			scanner.startMessage()
			frame, err := scanner.next()
			if err != nil {
				if err == io.EOF && offset != len(data) {
					t.Fatalf("clean EOF at byte %d of %d", offset, len(data))
				}
				break
			}
			if !bytes.Equal(frame, data[offset:offset+len(frame)]) {
				t.Fatalf("frame at byte %d is not the input's bytes", offset)
			}
			if err := checkValue(frame); err != nil {
				t.Fatalf("the scanner framed a value checkValue refuses: %v: % x", err, head(frame))
			}
			var v any
			dec := codec.NewDecoderBytes(frame, MsgpackHandle)
			if dec.Decode(&v) == nil && dec.NumBytesRead() != len(frame) {
				t.Fatalf("scanner framed %d bytes, decoder read %d: % x", len(frame), dec.NumBytesRead(), head(frame))
			}
			offset += len(frame)
		}

		// The stream scanner and checkValue agree on the first value.
		_, err := newFrameScanner(bytes.NewReader(data), 1<<20).next()
		if cerr := checkValue(data); (cerr == nil) != (err == nil) && len(data) < 1<<20 {
			t.Fatalf("the stream scanner says %v, checkValue says %v", err, cerr)
		}

		// Decode, as the FSM uses it.
		var args EchoArgs
		_ = Decode(data, &args)
		var tm time.Time
		_ = Decode(data, &tm)
		var v any
		if Decode(data, &v) != nil {
			return
		}
		// What a server forwards after decoding a request is what it
		// decoded. (Decode refuses extensions where an interface is
		// decoded, the one form go-msgpack did not give back as it took.)
		if a, b := canonical(t, canon, v), canonical(t, canon, reencode(t, v)); !bytes.Equal(a, b) {
			t.Fatalf("a value changed in an encode/decode round trip:\nbefore % x\nafter  % x", head(a), head(b))
		}
	})
}

// reencode encodes v and decodes it again. Anything that decoded must
// encode: a server that cannot re-encode a request cannot forward it.
func reencode(t *testing.T, v any) any {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatalf("a decoded %T cannot be encoded again: %v", v, err)
	}
	var out any
	if err := Decode(b, &out); err != nil {
		t.Fatalf("an encoded value does not decode: %v: % x", err, head(b))
	}
	return out
}

// readAsServer reads data the way a server reads a connection: request
// headers and bodies, until the stream fails. Bodies decode into the kinds
// of argument a method can take.
func readAsServer(data []byte) {
	c := newMsgCodec(readOnly{bytes.NewReader(data)}, fuzzMessageLimit)
	for i := 0; i < 64; i++ {
		var req rpc.Request
		if err := c.ReadRequestHeader(&req); err != nil {
			if c.broken.Load() {
				return
			}
			continue
		}
		var err error
		switch i % 4 {
		case 0:
			err = c.ReadRequestBody(nil)
		case 1:
			err = c.ReadRequestBody(&EchoArgs{})
		case 2:
			var v any
			err = c.ReadRequestBody(&v)
		case 3:
			var tm time.Time
			err = c.ReadRequestBody(&tm)
		}
		if err != nil && c.broken.Load() {
			return
		}
	}
}

// canonicalHandle encodes as MsgpackHandle does, with map keys sorted, so
// that equal values have equal bytes.
func canonicalHandle() *codec.MsgpackHandle {
	h := newMsgpackHandle()
	h.Canonical = true
	return h
}

func canonical(t *testing.T, h *codec.MsgpackHandle, v any) []byte {
	t.Helper()
	var b []byte
	if err := codec.NewEncoderBytes(&b, h).Encode(v); err != nil {
		t.Fatalf("canonical encoding of %T: %v", v, err)
	}
	return b
}

// FuzzFrameScannerLimit runs the stream scanner with limits from 1 byte
// up, over inputs made of encoded values: the limit is enforced exactly
// (a value that fits is returned, one that does not is refused with
// ErrMessageTooLarge, never read into memory), whatever the limit.
func FuzzFrameScannerLimit(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed, uint16(len(seed)))
		f.Add(seed, uint16(len(seed)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		if limit == 0 {
			limit = 1
		}
		size, err := newFrameScanner(bytes.NewReader(data), len(data)+1).next()
		if err != nil {
			return // not a well-formed value: FuzzCodec's concern
		}
		got, err := newFrameScanner(bytes.NewReader(data), int(limit)).next()
		switch {
		case len(size) <= int(limit):
			if err != nil || !bytes.Equal(got, size) {
				t.Fatalf("a %d-byte value under a %d-byte limit: got %d bytes, %v", len(size), limit, len(got), err)
			}
		case !errors.Is(err, ErrMessageTooLarge):
			t.Fatalf("a %d-byte value over a %d-byte limit: want ErrMessageTooLarge, got %v", len(size), limit, err)
		}
	})
}

func fuzzSeeds(tb testing.TB) [][]byte {
	msg := func(hdr, body any) []byte {
		h, err := Encode(hdr)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := Encode(body)
		if err != nil {
			tb.Fatal(err)
		}
		return append(h, b...)
	}
	good := msg(rpc.Request{ServiceMethod: "Test.Echo", Seq: 1}, EchoArgs{Msg: "hi", Data: []byte{1, 2}, N: 3})
	seeds := [][]byte{
		good,
		append(append([]byte{}, good...), good...),
		good[:len(good)/2],
		msg(rpc.Request{ServiceMethod: "Test.Nope", Seq: 2}, map[string]any{"a": []any{1, "b"}}),
		msg(rpc.Request{ServiceMethod: "Test.Echo", Seq: 3}, "wrong type"),
		msg(rpc.Request{ServiceMethod: "Test.Echo", Seq: 4}, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
		append(msg(rpc.Request{Seq: 5}, nil)[:0:0], 0xdd, 0xff, 0xff, 0xff, 0xff),
		{0xc9, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0xc1},
		bytes.Repeat([]byte{0x91}, 300),
		{0x81, 0x01, 0x02},
	}
	for _, v := range frameSamples()[:20] {
		b, err := Encode(v)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

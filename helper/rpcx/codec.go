package rpcx

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// maxNesting bounds how deeply arrays and maps may nest in one message. The
// frame scanner and the decoder enforce the same bound, so a peer cannot make
// either recurse without limit. Drover's structs nest a dozen levels at most.
const maxNesting = 256

// maxInitLen caps how many elements the decoder allocates up front for a
// collection before it has seen them: a value claiming a 4 GiB array gets at
// most this many elements, growing as more actually decode. It is the second
// line of defence. The first is that nothing reaches the decoder before a
// frame scan (frameScanner, checkValue) has checked every length prefix
// against the bytes actually present, so in practice an up-front allocation
// never exceeds the input's size. The cap is generous because go-msgpack
// grows a []byte by this step at a time, copying each time: a small cap
// makes decoding a large []byte quadratic.
const maxInitLen = DefaultMaxMessageSize

// MsgpackHandle is the msgpack configuration shared by RPC and by the raft
// FSM (log entries and snapshots), so the two always agree on encoding.
// Treat it as read-only: go-msgpack caches type information on first use and
// changing a field afterwards is a data race.
//
//   - RawToString: msgpack strings decode into an interface{} as Go
//     strings, not []byte, so map[string]any values read back as they
//     were written.
//   - MapType: a map decoded into an interface{} becomes map[string]any,
//     the shape encoding/json users expect, rather than
//     map[interface{}]interface{}.
//   - WriteExt: use the current msgpack spec (distinct str and bin types), so
//     []byte and string stay distinct on the wire.
//   - TimeNotBuiltin: time.Time goes through MarshalBinary, which keeps
//     nanoseconds and the zone offset; the builtin msgpack timestamp would
//     turn every time into UTC.
//     (go-msgpack decodes a bare *time.Time with its builtin decoder
//     regardless, which cannot read this form; Decode and the RPC codec
//     route that case through decodeInto. Times inside structs, slices and
//     maps are unaffected.)
//   - TypeInfos: only `codec` tags are read, so `json:"-"` on a field
//     hides it from HTTP responses but not from RPC or raft.
//   - MaxInitLen, MaxDepth: see maxInitLen and maxNesting.
var MsgpackHandle = newMsgpackHandle()

func newMsgpackHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.WriteExt = true
	h.MapType = reflect.TypeOf(map[string]any(nil))
	h.TimeNotBuiltin = true
	// Only `codec` struct tags shape the wire format. Without this the
	// codec honours `json` tags too, and a field hidden from HTTP
	// responses with json:"-" (a node's secret) would vanish from RPC
	// and raft entries as well.
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.MaxInitLen = maxInitLen
	h.MaxDepth = maxNesting
	return h
}

// Encode serialises v with MsgpackHandle. The raft FSM uses it for log
// entries and snapshots.
func Encode(v any) ([]byte, error) {
	var b []byte
	if err := codec.NewEncoderBytes(&b, MsgpackHandle).Encode(v); err != nil {
		return nil, fmt.Errorf("rpcx: encode %T: %w", v, err)
	}
	return b, nil
}

// Decode deserialises b, which must hold exactly one value, into out, which
// must be a non-nil pointer. b is checked first as the RPC codec checks a
// message (lengths backed by bytes present, nesting bounded), so a corrupt
// log entry or snapshot fails cleanly instead of allocating what a broken
// length prefix claims, or what many small values would each become (see
// checkDecodeCost). Bytes after the value are refused too: they mean
// corruption, and the decoder would not simply ignore them (it reads the
// value after a zero-length extension as the extension's content). Decoded
// values never alias b, so the caller may reuse b afterwards.
func Decode(b []byte, out any) error {
	n, err := valueLen(b)
	if err != nil {
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	if n != len(b) {
		return fmt.Errorf("rpcx: decode %T: %w: %d bytes after the value's %d", out, ErrMalformedMessage, len(b)-n, n)
	}
	if err := checkDecodeCost(b, out); err != nil {
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	if err := decodePooled(b, out); err != nil {
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	return nil
}

// decoders recycles byte decoders, costly to make: a stream or a raft
// apply needs one only while it decodes a value.
var decoders = sync.Pool{New: func() any { return codec.NewDecoderBytes(nil, MsgpackHandle) }}

// decodePooled decodes b into out with a pooled decoder, which holds no
// reference to b once it is back in the pool.
func decodePooled(b []byte, out any) error {
	dec := decoders.Get().(*codec.Decoder)
	dec.ResetBytes(b)
	err := decodeInto(dec, out)
	dec.ResetBytes(nil)
	decoders.Put(dec)
	return err
}

// decodeInto decodes the decoder's next value into out. A bare *time.Time is
// decoded as the MarshalBinary bytes that the encoder wrote, because
// go-msgpack's shortcut for that type ignores TimeNotBuiltin.
func decodeInto(dec *codec.Decoder, out any) error {
	tp, ok := out.(*time.Time)
	if !ok {
		return dec.Decode(out)
	}
	var raw []byte
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if raw == nil {
		*tp = time.Time{}
		return nil
	}
	return tp.UnmarshalBinary(raw)
}

package rpcx

import (
	"fmt"
	"io"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// ValueReader reads msgpack values one after another from a stream, such
// as a raft snapshot, with the same guards the RPC codec puts on a
// message: each value is framed first (every length prefix backed by
// bytes that really arrived, nesting bounded, at most limit bytes) and
// decoded only if what it decodes into stays within a multiple of its size
// (checkDecodeCost). A bare go-msgpack stream decoder trusts length
// prefixes: five bytes claiming a slice of sixteen million elements make
// it allocate them before reading any.
type ValueReader struct {
	frame *frameScanner
	dec   *codec.Decoder
}

// NewValueReader reads values of at most limit bytes each from r; limit <= 0
// means DefaultMaxMessageSize.
func NewValueReader(r io.Reader, limit int) *ValueReader {
	return &ValueReader{frame: newFrameScanner(r, limit), dec: codec.NewDecoderBytes(nil, MsgpackHandle)}
}

// Decode reads the next value into out, a non-nil pointer. It returns
// io.EOF, unwrapped, only when the stream ends cleanly before a value; a
// stream that ends inside one is io.ErrUnexpectedEOF. After an error
// about the stream (as opposed to a value that does not fit out) the
// reader's position is lost and every later call fails the same way.
func (v *ValueReader) Decode(out any) error {
	v.frame.startMessage()
	b, err := v.frame.next()
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return fmt.Errorf("rpcx: read %T: %w", out, err)
	}
	if err := checkDecodeCost(b, out); err != nil {
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	v.dec.ResetBytes(b)
	if err := decodeInto(v.dec, out); err != nil {
		return fmt.Errorf("rpcx: decode %T: %w", out, err)
	}
	return nil
}

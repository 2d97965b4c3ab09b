package rpcx

import (
	"encoding/binary"
	"fmt"
)

// header is a msgpack value's type byte decoded.
type header struct {
	kind headerKind
	// n is a string, binary or extension's byte length, or an array's
	// element or a map's entry count.
	n int
	// extTag is an extension's type.
	extTag int8
}

type headerKind uint8

const (
	kindNil headerKind = iota
	kindScalar
	kindStr
	kindBin
	kindExt
	kindArray
	kindMap
)

// next reads the header of the next value. For strings, binaries and
// extensions the payload follows at w.pos.
func (w *costWalker) next() (header, error) {
	if w.pos >= len(w.b) {
		return header{}, errTruncated
	}
	c := w.b[w.pos]
	w.pos++
	switch {
	case c <= 0x7f, c >= 0xe0:
		return header{kind: kindScalar}, nil
	case c <= 0x8f:
		return header{kind: kindMap, n: int(c & 0x0f)}, nil
	case c <= 0x9f:
		return header{kind: kindArray, n: int(c & 0x0f)}, nil
	case c <= 0xbf:
		return header{kind: kindStr, n: int(c & 0x1f)}, nil
	}
	switch c {
	case 0xc0:
		return header{kind: kindNil}, nil
	case 0xc2, 0xc3:
		return header{kind: kindScalar}, nil
	case 0xcc, 0xd0:
		return w.scalar(1)
	case 0xcd, 0xd1:
		return w.scalar(2)
	case 0xca, 0xce, 0xd2:
		return w.scalar(4)
	case 0xcb, 0xcf, 0xd3:
		return w.scalar(8)
	case 0xd9:
		return w.sized(kindStr, 1)
	case 0xda:
		return w.sized(kindStr, 2)
	case 0xdb:
		return w.sized(kindStr, 4)
	case 0xc4:
		return w.sized(kindBin, 1)
	case 0xc5:
		return w.sized(kindBin, 2)
	case 0xc6:
		return w.sized(kindBin, 4)
	case 0xdc:
		return w.sized(kindArray, 2)
	case 0xdd:
		return w.sized(kindArray, 4)
	case 0xde:
		return w.sized(kindMap, 2)
	case 0xdf:
		return w.sized(kindMap, 4)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return w.ext(1<<(c-0xd4), 0)
	case 0xc7:
		return w.ext(-1, 1)
	case 0xc8:
		return w.ext(-1, 2)
	case 0xc9:
		return w.ext(-1, 4)
	}
	return header{}, fmt.Errorf("%w: reserved type byte 0x%02x", ErrMalformedMessage, c)
}

func (w *costWalker) scalar(payload int) (header, error) {
	if err := w.skipBytes(payload); err != nil {
		return header{}, err
	}
	return header{kind: kindScalar}, nil
}

func (w *costWalker) sized(kind headerKind, lenBytes int) (header, error) {
	n, err := w.readLen(lenBytes)
	if err != nil {
		return header{}, err
	}
	return header{kind: kind, n: n}, nil
}

// ext reads an extension header: a fixed length (fixext) or a length field
// of lenBytes, then the type byte.
func (w *costWalker) ext(fixed, lenBytes int) (header, error) {
	n := fixed
	if lenBytes > 0 {
		var err error
		if n, err = w.readLen(lenBytes); err != nil {
			return header{}, err
		}
	}
	if w.pos >= len(w.b) {
		return header{}, errTruncated
	}
	tag := int8(w.b[w.pos])
	w.pos++
	return header{kind: kindExt, n: n, extTag: tag}, nil
}

func (w *costWalker) readLen(size int) (int, error) {
	if len(w.b)-w.pos < size {
		return 0, errTruncated
	}
	var n uint64
	switch size {
	case 1:
		n = uint64(w.b[w.pos])
	case 2:
		n = uint64(binary.BigEndian.Uint16(w.b[w.pos:]))
	case 4:
		n = uint64(binary.BigEndian.Uint32(w.b[w.pos:]))
	}
	w.pos += size
	if n > uint64(len(w.b)) {
		// More than the message holds: valueLen has refused this already.
		return 0, errTruncated
	}
	return int(n), nil
}

func (w *costWalker) skipBytes(n int) error {
	if len(w.b)-w.pos < n {
		return errTruncated
	}
	w.pos += n
	return nil
}

var errTruncated = fmt.Errorf("%w: value cut short", ErrMalformedMessage)

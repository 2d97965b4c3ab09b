package rpcx

import (
	"fmt"
	"reflect"
)

// A message may decode into at most decodeCostSlack + decodeCostFactor
// times its own size in bytes (see checkDecodeCost).
//
// A well-formed message decodes into about as many bytes as it takes on the
// wire: msgpack spells out every field name, and a field name is longer
// than the pointer or integer it names. Even values as dense as Drover's
// types allow (empty names, empty maps, zero numbers, times with a zone)
// stay under half the factor (TestDecodeCostBoundsWhatDecodingAllocates),
// and the slack covers what a small message costs before its fields do.
// Against them, one byte that claims "an empty Allocation here" costs 448
// bytes, so without the check a 16 MiB request decodes into over 7 GiB;
// with it, into at most 512 MiB, and usually it is refused after a
// fraction of a pass over its bytes.
const (
	decodeCostFactor = 32
	decodeCostSlack  = 64 << 10
)

// costUnmarshal is what a time.Time or another BinaryUnmarshaler may
// allocate beyond its bytes: a zone, a buffer.
const costUnmarshal = 256

// allocCost is what an allocation of n bytes takes from the heap. The
// runtime rounds a small one up to a size class, wasting at most an eighth
// (the smallest class is 16 bytes), and a large one up to whole 8 KiB
// pages.
func allocCost(n uint64) uint64 {
	switch {
	case n == 0:
		return 0
	case n > 32<<10:
		return n + 8<<10
	}
	return n + n/8 + 16
}

// mapCost is what a map of n entries of keySize and elemSize bytes takes,
// made with its size known as go-msgpack makes it: a header, and for
// entries groups of eight slots, at most seven eighths full, in tables of
// a power of two groups, so at most twice the slots the entries need.
func mapCost(n, keySize, elemSize uint64) uint64 {
	slots := uint64(0)
	switch {
	case n > 7:
		slots = 2 * n
	case n > 0:
		slots = 8
	}
	return allocCost(64) + allocCost(slots*(keySize+elemSize+1))
}

// checkDecodeCost estimates what decoding the msgpack value b into out (a
// pointer) makes go-msgpack allocate, and refuses b if that is more than
// its budget. The frame scanner already keeps every length prefix honest,
// so no single allocation exceeds the message; but a message's bytes can
// still each become something much larger (a 1-byte empty map becomes a
// whole struct, a 1-byte nil a slot in a slice of structs), and a peer that
// fills a message with them multiplies its size by hundreds.
//
// The estimate follows the value's structure against out's Go type, as the
// decoder will: struct fields by name, slice and map elements by their
// types, interfaces as go-msgpack fills them. It stops as soon as the
// budget is spent, so it costs at most one pass over b. It also refuses
// an extension where an interface is decoded, and a zero-length one in a
// field that is skipped, which go-msgpack mishandles (see generic and
// skipNext), so that what is decoded is what was framed and can be sent
// on. Drover's encoder writes no extension.
//
// b must already have passed the frame scanner or valueLen.
func checkDecodeCost(b []byte, out any) error {
	typ := reflect.TypeOf(out)
	if typ == nil || typ.Kind() != reflect.Pointer {
		return nil // the decoder refuses these itself
	}
	budget := uint64(decodeCostSlack) + decodeCostFactor*uint64(len(b))
	if _, err := decodeCost(b, typ.Elem(), budget); err != nil {
		if err == errCostSpent {
			return fmt.Errorf("%w: decoding %d bytes into %s would take more than %d bytes (at most %d times the message's size, plus %d KiB)",
				ErrMalformedMessage, len(b), typ.Elem(), budget, decodeCostFactor, decodeCostSlack>>10)
		}
		return err
	}
	return nil
}

// decodeCost is the estimate checkDecodeCost makes for decoding b into a
// t, or errCostSpent once it passes budget.
func decodeCost(b []byte, t reflect.Type, budget uint64) (uint64, error) {
	w := costWalker{b: b, budget: budget}
	if err := w.value(planFor(t), 0); err != nil {
		return w.cost, err
	}
	return w.cost, nil
}

// costWalker walks one msgpack value, adding up its estimated cost.
type costWalker struct {
	b      []byte
	pos    int
	cost   uint64
	budget uint64
}

// errCostSpent stops a walk once the budget is spent; checkDecodeCost
// reports it with the figures.
var errCostSpent = fmt.Errorf("%w: decode budget spent", ErrMalformedMessage)

func (w *costWalker) add(n uint64) error {
	w.cost += n
	if w.cost > w.budget {
		return errCostSpent
	}
	return nil
}

// value walks the next value as decoded into a p.typ.
func (w *costWalker) value(p *typePlan, depth int) error {
	h, err := w.next()
	if err != nil {
		return err
	}
	return w.valueWith(h, p, depth)
}

func (w *costWalker) valueWith(h header, p *typePlan, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("%w: nested deeper than %d", ErrMalformedMessage, maxNesting)
	}
	if h.kind == kindNil {
		return nil
	}
	if p.unmarshals {
		// Decoded by the type itself, from bytes; a time builds its zone.
		if err := w.add(costUnmarshal + allocCost(uint64(h.n))); err != nil {
			return err
		}
		return w.skip(h, depth)
	}
	switch p.kind {
	case reflect.Pointer:
		if err := w.add(allocCost(p.elem.size)); err != nil {
			return err
		}
		return w.valueWith(h, p.elem, depth)
	case reflect.Interface:
		return w.generic(h, depth)
	case reflect.Struct:
		return w.structValue(h, p, depth)
	case reflect.Slice:
		return w.sliceValue(h, p, depth)
	case reflect.Array:
		return w.elements(h, p.elem, depth)
	case reflect.Map:
		return w.mapValue(h, p, depth)
	case reflect.String:
		if h.kind == kindStr || h.kind == kindBin {
			if err := w.add(allocCost(uint64(h.n))); err != nil {
				return err
			}
		}
	}
	return w.skip(h, depth)
}

// structValue: a struct is sent as a map from field name to value.
// go-msgpack also takes an array of fields in declaration order, which
// Drover never sends; refusing it keeps the fields' types known.
func (w *costWalker) structValue(h header, p *typePlan, depth int) error {
	switch h.kind {
	case kindMap:
	case kindArray:
		return fmt.Errorf("%w: a %s is sent as a map of its fields, not an array", ErrMalformedMessage, p.typ)
	default:
		return w.skip(h, depth)
	}
	for range h.n {
		k, err := w.next()
		if err != nil {
			return err
		}
		if k.kind != kindStr && k.kind != kindBin {
			return fmt.Errorf("%w: a field name of a %s is not a string", ErrMalformedMessage, p.typ)
		}
		if len(w.b)-w.pos < k.n {
			return errTruncated
		}
		name := w.b[w.pos : w.pos+k.n]
		w.pos += k.n
		f, ok := p.fields[string(name)]
		if !ok {
			// go-msgpack skips a field it does not know without keeping it.
			if err := w.skipNext(depth + 1); err != nil {
				return err
			}
			continue
		}
		if err := w.add(f.embedded); err != nil {
			return err
		}
		if err := w.value(f.plan, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// sliceValue: the decoder allocates the whole backing array at once, then
// fills each element; through reflect it allocates a slice header too,
// even for an empty slice. A map decodes into a slice as keys and values
// in turn; a string or binary into a byte slice as its bytes.
func (w *costWalker) sliceValue(h header, p *typePlan, depth int) error {
	switch h.kind {
	case kindStr, kindBin:
		if err := w.add(allocCost(24) + allocCost(uint64(h.n))); err != nil {
			return err
		}
		return w.skip(h, depth)
	case kindArray, kindMap:
		n := uint64(h.n)
		if h.kind == kindMap {
			n *= 2
		}
		if err := w.add(allocCost(24) + allocCost(n*p.elem.size)); err != nil {
			return err
		}
		return w.elements(h, p.elem, depth)
	}
	return w.skip(h, depth)
}

// elements walks an array's elements, or a map's keys and values, as
// values of type elem.
func (w *costWalker) elements(h header, elem *typePlan, depth int) error {
	n := h.n
	switch h.kind {
	case kindMap:
		n *= 2
	case kindArray:
	default:
		return w.skip(h, depth)
	}
	for range n {
		if err := w.value(elem, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (w *costWalker) mapValue(h header, p *typePlan, depth int) error {
	if h.kind == kindArray {
		// go-msgpack refuses an array for a Go map, but a type that
		// decodes through a map's shape (decodesAs: a node's Attributes
		// reads its pairs into a slice) would take one, unestimated.
		// Drover writes every map as a map.
		return fmt.Errorf("%w: a %s is sent as a map, not an array", ErrMalformedMessage, p.typ)
	}
	if h.kind != kindMap {
		return w.skip(h, depth)
	}
	if err := w.add(mapCost(uint64(h.n), p.key.size, p.elem.size)); err != nil {
		return err
	}
	for range h.n {
		if err := w.value(p.key, depth+1); err != nil {
			return err
		}
		if err := w.value(p.elem, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// generic walks a value decoded into an interface: scalars boxed, strings
// as strings, arrays as []any, maps as map[string]any.
func (w *costWalker) generic(h header, depth int) error {
	switch h.kind {
	case kindNil:
		return nil
	case kindScalar:
		return w.add(allocCost(8))
	case kindStr, kindBin:
		if err := w.add(allocCost(16) + allocCost(uint64(h.n))); err != nil {
			return err
		}
	case kindExt:
		// Drover's encoder writes no extension (times are binary), and
		// go-msgpack mishandles them here: it reads the value after a
		// zero-length one as its content, and a map key given twice makes
		// it decode the second value into the raw extension the first left,
		// keeping a form whose encoding no longer decodes. Either way the
		// server could not forward the request or write it to the log.
		return fmt.Errorf("%w: an extension (type %d) where any value may go", ErrMalformedMessage, h.extTag)
	case kindArray:
		if err := w.add(allocCost(24) + allocCost(16*uint64(h.n))); err != nil {
			return err
		}
		for range h.n {
			if err := w.genericNext(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case kindMap:
		// map[string]any: a string header and an interface per entry.
		if err := w.add(allocCost(8) + mapCost(uint64(h.n), 16, 16)); err != nil {
			return err
		}
		for range 2 * h.n {
			if err := w.genericNext(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return w.skipBytes(h.n)
}

func (w *costWalker) genericNext(depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("%w: nested deeper than %d", ErrMalformedMessage, maxNesting)
	}
	h, err := w.next()
	if err != nil {
		return err
	}
	return w.generic(h, depth)
}

// skip moves past a value the decoder will not keep (or will refuse),
// whose header has been read.
func (w *costWalker) skip(h header, depth int) error {
	switch h.kind {
	case kindStr, kindBin, kindExt:
		return w.skipBytes(h.n)
	case kindArray, kindMap:
		n := h.n
		if h.kind == kindMap {
			n *= 2
		}
		for range n {
			if err := w.skipNext(depth + 1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *costWalker) skipNext(depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("%w: nested deeper than %d", ErrMalformedMessage, maxNesting)
	}
	h, err := w.next()
	if err != nil {
		return err
	}
	if h.kind == kindExt && h.n == 0 {
		// Skipped or not, go-msgpack reads the value after it too.
		return fmt.Errorf("%w: a zero-length extension (type %d)", ErrMalformedMessage, h.extTag)
	}
	return w.skip(h, depth)
}

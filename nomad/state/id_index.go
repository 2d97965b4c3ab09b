package state

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/hashicorp/go-memdb"
)

// idIndexer is the indexer of every table's primary "id" index: the key
// of an object is the bytes of its ID field itself, not a copy.
//
// go-memdb's StringFieldIndex copies the field and appends a NUL
// terminator, so each stored node, alloc and eval also held its ID a
// second time as the radix tree's key: 48 bytes for a UUID, for as long
// as the object lives. The radix tree only reads keys (it slices them for
// its edges' prefixes and never writes through them), so a key may share
// the string's bytes; the slice keeps the string alive, and a string is
// never changed.
//
// Without the terminator the keys sort as the IDs do (NUL sorted before
// every other byte, so the order is the same), an exact lookup still
// finds only its own key (the radix tree tells "ab" from "abc"), and a
// prefix lookup is the prefix itself, as before.
type idIndexer struct {
	Field string
}

// FromObject returns obj's ID field as the key; an object without an ID
// is not indexed (go-memdb then refuses it: the id index may not be
// missing).
func (x *idIndexer) FromObject(obj any) (bool, []byte, error) {
	v := reflect.Indirect(reflect.ValueOf(obj))
	if v.Kind() != reflect.Struct {
		return false, nil, fmt.Errorf("id index: %T is not a struct or a pointer to one", obj)
	}
	fv := v.FieldByName(x.Field)
	if !fv.IsValid() || fv.Kind() != reflect.String {
		return false, nil, fmt.Errorf("id index: %T has no string field %s", obj, x.Field)
	}
	s := fv.String()
	if s == "" {
		return false, nil, nil
	}
	return true, unsafe.Slice(unsafe.StringData(s), len(s)), nil
}

// FromArgs is the key of an exact lookup: one string, the ID.
func (x *idIndexer) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("id index: a lookup by %s takes one argument, got %d", x.Field, len(args))
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("id index: a lookup by %s takes a string, got %T", x.Field, args[0])
	}
	return []byte(s), nil
}

// PrefixFromArgs is the key prefix of a lookup by ID prefix: the same
// bytes, as keys carry no terminator.
func (x *idIndexer) PrefixFromArgs(args ...any) ([]byte, error) {
	return x.FromArgs(args...)
}

// deleteByID deletes the object whose id-index key is id, and reports how
// many it deleted (0 or 1). It is the exact delete: go-memdb's DeleteAll
// seeks its key as a prefix, which on this index's unterminated keys would
// also delete every object whose ID id is a prefix of ("web-http" taking
// "web-http-2" with it). Never use Get or DeleteAll with arguments on an
// index built by idIndexer; use First, LowerBound (firstByKey) or this.
func deleteByID(txn *memdb.Txn, table, id string) (int, error) {
	obj, err := txn.First(table, "id", id)
	if err != nil || obj == nil {
		return 0, err
	}
	if err := txn.Delete(table, obj); err != nil {
		return 0, err
	}
	return 1, nil
}

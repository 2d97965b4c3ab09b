package state

import memdb "github.com/hashicorp/go-memdb"

// firstByKey returns the object a unique index holds under args, or nil,
// and adds a watch on it to ws.
//
// With ws nil it reads without a watch channel. go-memdb's First and
// FirstWatch both go through the radix tree's GetWatch, which makes the
// entry's channel on first use (third_party/go-immutable-radix), and that
// channel then lives as long as the entry: about 112 bytes for every node,
// alloc or eval ever read by ID, though nobody waits on it. Reads by ID
// without a WatchSet are the common case (a node's every heartbeat is
// authenticated by one), so they seek the index's lower bound instead,
// which makes no channel, and keep the object only if is says it is the
// one asked for: on a unique index the lower bound of a key is the entry
// with that key when there is one.
func firstByKey[T comparable](txn *memdb.Txn, ws memdb.WatchSet, is func(T) bool, table, index string, args ...any) (T, error) {
	var none T
	if ws != nil {
		ch, raw, err := txn.FirstWatch(table, index, args...)
		if err != nil {
			return none, err
		}
		ws.Add(ch)
		if raw == nil {
			return none, nil
		}
		return raw.(T), nil
	}
	iter, err := txn.LowerBound(table, index, args...)
	if err != nil {
		return none, err
	}
	obj, ok := iter.Next().(T)
	if !ok || !is(obj) {
		return none, nil
	}
	return obj, nil
}

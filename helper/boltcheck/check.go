package boltcheck

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrCorrupt marks a file Check found unreadable.
var ErrCorrupt = errors.New("corrupt bolt database")

// minSize is the size of an empty database: two meta pages, a freelist
// page and a leaf page. A shorter, non-empty file was cut short.
const minPages = 4

// Check reports whether the bolt database at path can be read whole. A
// missing or empty file is fine (the store creates it). The error wraps
// ErrCorrupt and says what was wrong; the caller adds what to do.
func Check(path string) (err error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return nil
	}
	page := int64(os.Getpagesize())
	if st.Size() < minPages*page {
		return fmt.Errorf("%w: %s is %d bytes, shorter than an empty database (%d bytes): it was cut short", ErrCorrupt, path, st.Size(), minPages*page)
	}
	return Guard(path, func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			if errors.Is(err, berrors.ErrTimeout) {
				return fmt.Errorf("%s is locked by another process", path)
			}
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		}
		defer db.Close()
		// Every page is read here, on this goroutine, where a fault is
		// recovered; bbolt's own tx.Check reads on a goroutine of its
		// own, where a fault on a truncated file would kill the process.
		return db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
		})
	})
}

// Guard runs f, turning a panic or a memory fault inside it (bbolt on a
// corrupt or truncated file) into an error naming path. It runs f on the
// calling goroutine.
func Guard(path string, f func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: reading it failed: %v", ErrCorrupt, path, p)
		}
	}()
	return f()
}

// walk reads every key and value of b and of the buckets nested in it,
// touching the first and last byte of each so a page past the end of a
// truncated file faults here.
func walk(b *bolt.Bucket) error {
	var sink byte
	err := b.ForEach(func(k, v []byte) error {
		if len(k) > 0 {
			sink ^= k[0] ^ k[len(k)-1]
		}
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				return walk(nb)
			}
			return nil
		}
		if len(v) > 0 {
			sink ^= v[0] ^ v[len(v)-1]
		}
		return nil
	})
	_ = sink
	return err
}

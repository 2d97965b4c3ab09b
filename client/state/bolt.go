package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/boltcheck"
	"github.com/drover-sched/drover/structs"
)

var (
	allocsBucket = []byte("allocs")
	tasksBucket  = []byte("tasks")
	allocKey     = []byte("alloc")
	stateKey     = []byte("state")
	handleKey    = []byte("handle")
)

// BoltDB is the on-disk DB.
type BoltDB struct {
	db *bolt.DB
}

// Open opens (creating if needed) the database at path. A second client on
// the same data dir fails here after a second instead of corrupting it.
func Open(path string) (*BoltDB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := boltcheck.Check(path); err != nil && errors.Is(err, boltcheck.ErrCorrupt) {
		return nil, corruptState(path, err)
	}
	var db *bolt.DB
	err := boltcheck.Guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		return err
	})
	if errors.Is(err, boltcheck.ErrCorrupt) {
		return nil, corruptState(path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open client state %s (is another client using this data dir?): %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(allocsBucket)
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &BoltDB{db: db}, nil
}

// Close closes the database.
func (b *BoltDB) Close() error { return b.db.Close() }

func put(bk *bolt.Bucket, key []byte, v any) error {
	buf, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return bk.Put(key, buf)
}

// taskBucket returns allocs/<id>/tasks/<task>, creating it when create.
func taskBucket(tx *bolt.Tx, allocID, task string, create bool) (*bolt.Bucket, error) {
	allocs := tx.Bucket(allocsBucket)
	if !create {
		a := allocs.Bucket([]byte(allocID))
		if a == nil {
			return nil, nil
		}
		ts := a.Bucket(tasksBucket)
		if ts == nil {
			return nil, nil
		}
		return ts.Bucket([]byte(task)), nil
	}
	a, err := allocs.CreateBucketIfNotExists([]byte(allocID))
	if err != nil {
		return nil, err
	}
	ts, err := a.CreateBucketIfNotExists(tasksBucket)
	if err != nil {
		return nil, err
	}
	return ts.CreateBucketIfNotExists([]byte(task))
}

// PutAlloc stores the allocation.
func (b *BoltDB) PutAlloc(a *structs.Allocation) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.Bucket(allocsBucket).CreateBucketIfNotExists([]byte(a.ID))
		if err != nil {
			return err
		}
		return put(bk, allocKey, a)
	})
}

// GetAllocs returns every allocation; one that cannot be decoded is
// skipped with the error joined into the result, so one bad record does not
// lose the others.
func (b *BoltDB) GetAllocs() ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	var errs []error
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(allocsBucket).ForEachBucket(func(k []byte) error {
			v := tx.Bucket(allocsBucket).Bucket(k).Get(allocKey)
			if v == nil {
				return nil
			}
			var a structs.Allocation
			if err := json.Unmarshal(v, &a); err != nil {
				errs = append(errs, fmt.Errorf("alloc %s: %w", k, err))
				return nil
			}
			out = append(out, &a)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, errors.Join(errs...)
}

// DeleteAlloc removes the allocation and its tasks.
func (b *BoltDB) DeleteAlloc(allocID string) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		err := tx.Bucket(allocsBucket).DeleteBucket([]byte(allocID))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// PutTaskState stores a task's state.
func (b *BoltDB) PutTaskState(allocID, task string, s *structs.TaskState) error {
	return b.putTaskValue(allocID, task, stateKey, s)
}

// GetTaskState returns a task's state.
func (b *BoltDB) GetTaskState(allocID, task string) (*structs.TaskState, error) {
	return getTaskValue[structs.TaskState](b, allocID, task, stateKey)
}

// PutTaskHandle stores a task's driver handle.
func (b *BoltDB) PutTaskHandle(allocID, task string, h *drivers.TaskHandle) error {
	return b.putTaskValue(allocID, task, handleKey, h)
}

// GetTaskHandle returns a task's driver handle.
func (b *BoltDB) GetTaskHandle(allocID, task string) (*drivers.TaskHandle, error) {
	return getTaskValue[drivers.TaskHandle](b, allocID, task, handleKey)
}

// putTaskValue stores v as JSON under key in the task's bucket, which it
// makes if need be.
func (b *BoltDB) putTaskValue(allocID, task string, key []byte, v any) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk, err := taskBucket(tx, allocID, task, true)
		if err != nil {
			return err
		}
		return put(bk, key, v)
	})
}

// getTaskValue decodes the JSON under key in the task's bucket into a new
// T, or returns nil when there is none.
func getTaskValue[T any](b *BoltDB, allocID, task string, key []byte) (*T, error) {
	var out *T
	err := b.db.View(func(tx *bolt.Tx) error {
		bk, _ := taskBucket(tx, allocID, task, false)
		if bk == nil {
			return nil
		}
		if v := bk.Get(key); v != nil {
			out = new(T)
			return json.Unmarshal(v, out)
		}
		return nil
	})
	return out, err
}

// DeleteTaskHandle forgets a task's handle (the task exited).
func (b *BoltDB) DeleteTaskHandle(allocID, task string) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk, _ := taskBucket(tx, allocID, task, false)
		if bk == nil {
			return nil
		}
		return bk.Delete(handleKey)
	})
}

// corruptState says what to do about an unreadable client state file.
func corruptState(path string, err error) error {
	return fmt.Errorf("client state %s cannot be read (%v); the client cannot start from it. "+
		"Remove it (the client then forgets the tasks it was running, and the servers place their allocations again) and start the agent again", path, err)
}

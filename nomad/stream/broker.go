package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/drover-sched/drover/structs"
)

// DefaultBufferEvents is how many events a server keeps for subscribers
// that resume from an index or fall briefly behind. An event holds
// pointers into the state store plus, once read, its JSON (an alloc's is
// a few KiB without its job), so the default keeps the buffer in the tens
// of MiB at worst.
const DefaultBufferEvents = 8192

// DefaultBufferBytes bounds the memory the buffer holds, estimated as the
// bytes of the raft entries its events came from (what they keep alive:
// a large job's events pin that job) plus their JSON once encoded. It
// keeps a burst of large jobs from holding gigabytes where the count
// alone would allow it.
const DefaultBufferBytes = 64 << 20

// Errors that close a subscription. Next returns them wrapped with what
// the consumer should do next.
var (
	// ErrFellBehind: the subscriber read too slowly and the buffer
	// dropped events it had not read yet.
	ErrFellBehind = errors.New("event stream consumer fell behind the server's event buffer")
	// ErrTokenDeleted: the ACL token the subscription was opened with
	// was deleted.
	ErrTokenDeleted = errors.New("event stream closed: its ACL token was deleted")
	// ErrShutdown: the server is shutting down.
	ErrShutdown = errors.New("event stream closed: the server is shutting down")
	// ErrRestored: the server replaced its state with a raft snapshot,
	// whose changes are in no event, so a stream cannot go on as if
	// nothing were missing.
	ErrRestored = errors.New("event stream closed: the server restored its state from a snapshot, and the changes the snapshot brought are not events; read the current state, then reconnect")
)

// Config configures a Broker.
type Config struct {
	// BufferEvents bounds the events kept; 0 means DefaultBufferEvents.
	BufferEvents int
	// BufferBytes bounds their estimated memory; 0 means
	// DefaultBufferBytes. The newest batch is kept whatever its size.
	BufferBytes int64
}

// Broker keeps the newest events and delivers them to subscriptions.
type Broker struct {
	limit     int
	byteLimit int64

	mu sync.Mutex
	// batches are the kept batches, oldest first; batches[i].seq is
	// batches[0].seq+i.
	batches []*batch
	events  int
	bytes   int64 // the batches' weights together
	nextSeq uint64
	// droppedIndex is the raft index of the newest batch dropped from
	// the buffer: a subscriber asking for it or anything older has
	// missed events.
	droppedIndex uint64
	// notify is closed (and replaced) by every Publish, to wake waiting
	// subscribers.
	notify chan struct{}
	subs   map[*Subscription]struct{}
	closed bool
}

// batch is the events of one raft index.
type batch struct {
	seq    uint64
	index  uint64
	events []structs.Event
	// weight is the batch's estimated memory: its entry's bytes, plus
	// its events' JSON as they are encoded; dropped is set when it
	// leaves the buffer. Both are guarded by the broker's mu.
	weight  int64
	dropped bool

	// enc holds each event's JSON, encoded once when first needed. It is
	// made on the first encoding, and sits behind one pointer: most
	// batches are never read (a server without subscribers keeps
	// thousands, one per node registration or status change at fleet
	// size), and a sync.Once and a slice header in every batch would take
	// a quarter of the batch for nothing.
	enc atomic.Pointer[[]encodedEvent]
}

// encodedEvent is the JSON of one event of a batch.
type encodedEvent struct {
	once sync.Once
	json []byte
}

// NewBroker returns an empty broker.
func NewBroker(cfg Config) *Broker {
	limit := cfg.BufferEvents
	if limit <= 0 {
		limit = DefaultBufferEvents
	}
	byteLimit := cfg.BufferBytes
	if byteLimit <= 0 {
		byteLimit = DefaultBufferBytes
	}
	return &Broker{limit: limit, byteLimit: byteLimit, notify: make(chan struct{}), subs: map[*Subscription]struct{}{}}
}

// Publish adds the events of the raft entry at index, whose encoded size
// is entryBytes. It never blocks on subscribers: it drops the oldest
// batches beyond the buffer's bounds and closes the subscriptions that had
// not read them yet. The broker keeps the events; the caller must not
// change them afterwards.
func (b *Broker) Publish(index uint64, entryBytes int, events []structs.Event) {
	if len(events) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.batches = append(b.batches, &batch{seq: b.nextSeq, index: index, events: events, weight: int64(entryBytes)})
	b.nextSeq++
	b.events += len(events)
	b.bytes += int64(entryBytes)
	dropped := false
	for (b.events > b.limit || b.bytes > b.byteLimit) && len(b.batches) > 1 {
		old := b.batches[0]
		b.batches[0] = nil
		b.batches = b.batches[1:]
		b.events -= len(old.events)
		b.bytes -= old.weight
		old.dropped = true
		b.droppedIndex = old.index
		dropped = true
	}
	if dropped {
		oldest := b.batches[0].seq
		for s := range b.subs {
			if s.pos.Load() < oldest {
				b.dropLocked(s, fmt.Errorf("%w: it had read up to index %d and the oldest index kept is %d (the buffer keeps %d events, about %d MiB); reconnect with index=%d to resume from there, missing what was dropped",
					ErrFellBehind, s.lastIndex.Load(), b.batches[0].index, b.limit, b.byteLimit>>20, b.batches[0].index))
			}
		}
	}
	close(b.notify)
	b.notify = make(chan struct{})
}

// CloseTokens closes the subscriptions opened with any of the ACL tokens
// (by accessor ID): a deleted token must not keep reading.
func (b *Broker) CloseTokens(accessorIDs []string) {
	if len(accessorIDs) == 0 {
		return
	}
	gone := make(map[string]bool, len(accessorIDs))
	for _, id := range accessorIDs {
		gone[id] = true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.token != "" && gone[s.token] {
			b.dropLocked(s, ErrTokenDeleted)
		}
	}
}

// Shutdown closes every subscription with ErrShutdown and refuses new
// ones.
func (b *Broker) Shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		b.dropLocked(s, ErrShutdown)
	}
	b.batches, b.events, b.bytes = nil, 0, 0
}

// Size is the events kept and their estimated bytes.
func (b *Broker) Size() (events int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.events, b.bytes
}

// Reset empties the buffer and closes every subscription with
// ErrRestored: the FSM calls it when it restores a snapshot. Publishing
// goes on after it.
func (b *Broker) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		b.dropLocked(s, ErrRestored)
	}
	for _, bt := range b.batches {
		bt.dropped = true
		b.droppedIndex = max(b.droppedIndex, bt.index)
	}
	b.batches, b.events, b.bytes = nil, 0, 0
}

// Subscribers is the number of open subscriptions.
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Oldest is the raft index of the oldest batch kept, 0 if none.
func (b *Broker) Oldest() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.batches) == 0 {
		return 0
	}
	return b.batches[0].index
}

func (b *Broker) dropLocked(s *Subscription, err error) {
	if _, ok := b.subs[s]; !ok {
		return
	}
	delete(b.subs, s)
	s.err = err
	close(s.done)
}

// encoded returns the JSON of the batch's event i, encoding it on the
// first call and counting its bytes in b's (the batch's broker's) bounds: an event no subscriber receives is never encoded. An event
// that does not encode (it never should) is sent without its payload, and
// says why, rather than ending every stream.
func (bt *batch) encoded(b *Broker, i int) []byte {
	enc := bt.enc.Load()
	if enc == nil {
		made := make([]encodedEvent, len(bt.events))
		if !bt.enc.CompareAndSwap(nil, &made) {
			made = *bt.enc.Load() // another reader made it first
		}
		enc = &made
	}
	e := &(*enc)[i]
	e.once.Do(func() {
		buf, err := json.Marshal(&bt.events[i])
		if err != nil {
			ev := bt.events[i]
			ev.Payload = map[string]string{"Error": "encoding the payload failed: " + err.Error()}
			buf, _ = json.Marshal(&ev)
		}
		e.json = buf
		b.mu.Lock()
		if !bt.dropped {
			bt.weight += int64(len(buf))
			b.bytes += int64(len(buf))
		}
		b.mu.Unlock()
	})
	return e.json
}

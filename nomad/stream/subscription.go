package stream

import (
	"context"
	"strconv"
	"sync/atomic"

	"github.com/drover-sched/drover/structs"
)

// AllNamespaces in a SubscribeRequest asks for every namespace.
const AllNamespaces = "*"

// SubscribeRequest says which events a subscription receives.
type SubscribeRequest struct {
	// Topics maps each topic to the keys wanted in it ("*" for all); an
	// empty map means every topic. TopicAll ("*") as a topic matches any.
	Topics map[structs.Topic][]string
	// Namespace filters namespaced events; AllNamespaces for all. Events
	// without a namespace (nodes) always pass.
	Namespace string
	// Index is the raft index to start from: the first events delivered
	// are those at Index or after it. 0 means the oldest kept.
	Index uint64
	// Allow, if set, is asked about every event that passes the filters;
	// the ACL check of a token that may read some namespaces but not all.
	Allow func(*structs.Event) bool
	// Token is the accessor ID of the ACL token, so the subscription is
	// closed when that token is deleted; "" when ACLs are off.
	Token string
}

// Subscription is one consumer's position in the broker's buffer. Next
// may be called from one goroutine at a time.
type Subscription struct {
	b      *Broker
	topics map[structs.Topic]map[string]bool
	ns     string
	allow  func(*structs.Event) bool
	token  string

	// pos is the sequence number of the next batch to read, lastIndex
	// the raft index of the last batch read (for close reasons).
	pos       atomic.Uint64
	lastIndex atomic.Uint64

	// done is closed when the broker closes the subscription, after err
	// is set.
	done chan struct{}
	err  error

	// StartIndex is the raft index the subscription starts at: the
	// requested one, or the oldest kept when Truncated.
	StartIndex uint64
	// Truncated is set when events from the requested index on were
	// already dropped from the buffer, so the subscription starts at the
	// oldest kept instead and some events were missed.
	Truncated bool
}

// Subscribe opens a subscription. It fails only after Shutdown.
func (b *Broker) Subscribe(req SubscribeRequest) (*Subscription, error) {
	s := &Subscription{b: b, ns: req.Namespace, allow: req.Allow, token: req.Token, done: make(chan struct{})}
	if s.ns == "" {
		s.ns = structs.DefaultNamespace
	}
	if len(req.Topics) > 0 {
		s.topics = make(map[structs.Topic]map[string]bool, len(req.Topics))
		for t, keys := range req.Topics {
			set := make(map[string]bool, len(keys))
			for _, k := range keys {
				set[k] = true
			}
			if len(keys) == 0 {
				set["*"] = true
			}
			s.topics[t] = set
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrShutdown
	}
	pos := b.nextSeq
	for _, bt := range b.batches {
		if bt.index >= req.Index {
			pos = bt.seq
			break
		}
	}
	s.pos.Store(pos)
	s.StartIndex = req.Index
	if b.droppedIndex > 0 && req.Index <= b.droppedIndex {
		s.Truncated = true
		if len(b.batches) > 0 {
			s.StartIndex = b.batches[0].index
		}
	}
	b.subs[s] = struct{}{}
	return s, nil
}

// Frame is the events of one raft index that a subscription receives.
type Frame struct {
	Index  uint64
	Events []structs.Event

	batch  *batch
	broker *Broker // batch's, which accounts for the JSON encoded
	which  []int   // positions in batch.events
}

// Next waits for the next frame with events for this subscription. It
// returns the error the subscription was closed with (ErrFellBehind,
// ErrTokenDeleted, ErrShutdown, wrapped), or ctx's error.
func (s *Subscription) Next(ctx context.Context) (*Frame, error) {
	for {
		f, wait, err := s.next()
		if err != nil || f != nil {
			return f, err
		}
		if wait == nil {
			continue // a batch with nothing for this subscription
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			return nil, s.err
		case <-wait:
		}
	}
}

// TryNext is Next without waiting: nil when nothing is ready yet.
func (s *Subscription) TryNext() (*Frame, error) {
	for {
		f, wait, err := s.next()
		if err != nil || f != nil || wait != nil {
			return f, err
		}
	}
}

// next reads the next batch if there is one and filters it. With nothing
// to read it returns the channel that the next Publish closes. A batch
// with nothing for this subscription gives (nil, nil, nil): read again.
func (s *Subscription) next() (*Frame, <-chan struct{}, error) {
	b := s.b
	b.mu.Lock()
	select {
	case <-s.done:
		b.mu.Unlock()
		return nil, nil, s.err
	default:
	}
	pos := s.pos.Load()
	if len(b.batches) == 0 || pos >= b.nextSeq {
		wait := b.notify
		b.mu.Unlock()
		return nil, wait, nil
	}
	// Publish closes a subscription before dropping what it has not
	// read, so pos is within the buffer here.
	bt := b.batches[pos-b.batches[0].seq]
	s.pos.Store(pos + 1)
	b.mu.Unlock()
	s.lastIndex.Store(bt.index)

	var which []int
	for i := range bt.events {
		if s.match(&bt.events[i]) {
			which = append(which, i)
		}
	}
	if len(which) == 0 {
		return nil, nil, nil
	}
	f := &Frame{Index: bt.index, batch: bt, broker: s.b, which: which, Events: make([]structs.Event, len(which))}
	for j, i := range which {
		f.Events[j] = bt.events[i]
	}
	return f, nil, nil
}

func (s *Subscription) match(ev *structs.Event) bool {
	if s.topics != nil {
		keys, ok := s.topics[ev.Topic]
		if !ok {
			if keys, ok = s.topics[structs.TopicAll]; !ok {
				return false
			}
		}
		if !keys["*"] && !keys[ev.Key] && !anyKey(keys, ev.FilterKeys) {
			return false
		}
	}
	if ev.Namespace != "" && s.ns != AllNamespaces && ev.Namespace != s.ns {
		return false
	}
	return s.allow == nil || s.allow(ev)
}

func anyKey(keys map[string]bool, filterKeys []string) bool {
	for _, k := range filterKeys {
		if keys[k] {
			return true
		}
	}
	return false
}

// LastIndex is the raft index of the last batch the subscription read,
// whether or not it held events for it; 0 before the first. A stream
// that resumes later continues after it.
func (s *Subscription) LastIndex() uint64 { return s.lastIndex.Load() }

// Done is closed when the broker closes the subscription; Err then says
// why.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err is why the broker closed the subscription, nil while it is open.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	delete(s.b.subs, s)
}

// AppendJSON appends the frame as one line of Nomad's stream:
// {"Index":N,"Events":[...]} and a newline. The events' JSON is shared by
// every subscriber that receives them.
func (f *Frame) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"Index":`...)
	buf = strconv.AppendUint(buf, f.Index, 10)
	buf = append(buf, `,"Events":[`...)
	for j, i := range f.which {
		if j > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, f.batch.encoded(f.broker, i)...)
	}
	return append(buf, "]}\n"...)
}

// AppendHeartbeat appends the heartbeat frame, {} and a newline, which
// Nomad's clients skip.
func AppendHeartbeat(buf []byte) []byte { return structs.AppendEventHeartbeat(buf) }

// AppendNext is Next, appending the frame as a JSON line to buf
// (structs.EventSubscription).
func (s *Subscription) AppendNext(ctx context.Context, buf []byte) ([]byte, error) {
	f, err := s.Next(ctx)
	if err != nil {
		return buf, err
	}
	return f.AppendJSON(buf), nil
}

// AppendReady appends the frames ready now until buf holds limit bytes
// (structs.EventSubscription), so a burst is written at once.
func (s *Subscription) AppendReady(buf []byte, limit int) ([]byte, error) {
	for len(buf) < limit {
		f, err := s.TryNext()
		if err != nil || f == nil {
			return buf, err
		}
		buf = f.AppendJSON(buf)
	}
	return buf, nil
}

// Start is StartIndex and Truncated (structs.EventSubscription).
func (s *Subscription) Start() (uint64, bool) { return s.StartIndex, s.Truncated }

var _ structs.EventSubscription = (*Subscription)(nil)

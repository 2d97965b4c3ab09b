package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func ev(topic structs.Topic, key, ns string, filterKeys ...string) structs.Event {
	return structs.Event{Topic: topic, Type: "T", Key: key, Namespace: ns, FilterKeys: filterKeys, Payload: map[string]string{"Key": key}}
}

// drain reads every frame ready now.
func drain(t *testing.T, s *Subscription) []*Frame {
	t.Helper()
	var out []*Frame
	for {
		f, err := s.TryNext()
		if err != nil {
			t.Fatalf("TryNext: %v", err)
		}
		if f == nil {
			return out
		}
		out = append(out, f)
	}
}

func indexes(frames []*Frame) []uint64 {
	out := make([]uint64, len(frames))
	for i, f := range frames {
		out[i] = f.Index
	}
	return out
}

func keys(frames []*Frame) []string {
	var out []string
	for _, f := range frames {
		for _, e := range f.Events {
			out = append(out, e.Key)
		}
	}
	return out
}

func TestSubscriptionStartsAtTheRequestedIndex(t *testing.T) {
	b := NewBroker(Config{})
	for i := uint64(1); i <= 5; i++ {
		b.Publish(i*10, 100, []structs.Event{ev(structs.TopicJob, fmt.Sprint(i), "default")})
	}
	for _, tc := range []struct {
		name  string
		index uint64
		want  []uint64
	}{
		{"index 0 starts at the oldest kept", 0, []uint64{10, 20, 30, 40, 50}},
		{"an index that has events starts there, inclusive", 30, []uint64{30, 40, 50}},
		{"an index between entries starts at the next one", 31, []uint64{40, 50}},
		{"an index past the newest waits for new events", 51, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := b.Subscribe(SubscribeRequest{Index: tc.index})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := indexes(drain(t, s)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got indexes %v, want %v", got, tc.want)
			}
			if s.Truncated {
				t.Fatal("nothing was dropped, yet the subscription says it was truncated")
			}
		})
	}
}

func TestNextWaitsForThePublishThatFollows(t *testing.T) {
	b := NewBroker(Config{})
	s, err := b.Subscribe(SubscribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Frame, 1)
	go func() {
		f, err := s.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- f
	}()
	b.Publish(7, 100, []structs.Event{ev(structs.TopicNode, "n1", "")})
	select {
	case f := <-got:
		if f.Index != 7 || f.Events[0].Key != "n1" {
			t.Fatalf("got %+v", f)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Next did not return after a Publish")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next on a cancelled context: %v", err)
	}
}

func TestSubscriptionFilters(t *testing.T) {
	b := NewBroker(Config{})
	b.Publish(1, 100, []structs.Event{
		ev(structs.TopicJob, "web", "default"),
		ev(structs.TopicJob, "api", "default"),
		ev(structs.TopicJob, "web", "prod"),
		ev(structs.TopicAllocation, "a1", "default", "web", "d1"),
		ev(structs.TopicAllocation, "a2", "default", "api"),
		ev(structs.TopicNode, "n1", ""),
		ev(structs.TopicEvaluation, "e1", "prod", "web"),
	})
	for _, tc := range []struct {
		name string
		req  SubscribeRequest
		want []string
	}{
		{"no topics is every topic of the default namespace", SubscribeRequest{}, []string{"web", "api", "a1", "a2", "n1"}},
		{"a topic with a key matches the event's key", SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}}, []string{"web"}},
		{"a key also matches filter keys (an alloc's job)", SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicAllocation: {"web"}}}, []string{"a1"}},
		{"a deployment ID is a filter key of an alloc", SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicAllocation: {"d1"}}}, []string{"a1"}},
		{"* as the key is every key of the topic", SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicAllocation: {"*"}}}, []string{"a1", "a2"}},
		{"several topics together", SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"api"}, structs.TopicNode: {"*"}}}, []string{"api", "n1"}},
		{"* as the topic with a key", SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicAll: {"web"}}}, []string{"web", "a1"}},
		{"a namespace selects its events and those without one", SubscribeRequest{Namespace: "prod"}, []string{"web", "n1", "e1"}},
		{"namespace * is all of them", SubscribeRequest{Namespace: AllNamespaces}, []string{"web", "api", "web", "a1", "a2", "n1", "e1"}},
		{"Allow removes what the token may not read", SubscribeRequest{Namespace: AllNamespaces,
			Allow: func(e *structs.Event) bool { return e.Namespace != "prod" }}, []string{"web", "api", "a1", "a2", "n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := b.Subscribe(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := keys(drain(t, s)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAConsumerThatNeverReadsIsDroppedAndPublishGoesOn(t *testing.T) {
	b := NewBroker(Config{BufferEvents: 4})
	stuck, err := b.Subscribe(SubscribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := b.Subscribe(SubscribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var read []uint64
	// Publish never waits for anyone: this loop ends though stuck never
	// reads, and reader, which keeps up, sees everything.
	for i := uint64(1); i <= 20; i++ {
		b.Publish(i, 100, []structs.Event{ev(structs.TopicJob, "j", "default")})
		read = append(read, indexes(drain(t, reader))...)
	}
	select {
	case <-stuck.Done():
	default:
		t.Fatal("a subscriber that fell behind the buffer was not closed")
	}
	_, err = stuck.Next(context.Background())
	if !errors.Is(err, ErrFellBehind) {
		t.Fatalf("Next of a dropped subscriber: %v, want ErrFellBehind", err)
	}
	t.Logf("close reason: %v", err)
	if want := "reconnect with index="; !contains(err.Error(), want) {
		t.Fatalf("the close reason %q does not say how to resume (%q)", err, want)
	}
	if len(read) != 20 || read[0] != 1 || read[19] != 20 {
		t.Fatalf("the subscriber that kept up read %v, want 1..20", read)
	}
	if reader.Err() != nil {
		t.Fatalf("the subscriber that kept up was closed: %v", reader.Err())
	}
	if n := b.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers left, want 1 (the dropped one must be gone)", n)
	}
	if got := b.Oldest(); got != 17 {
		t.Fatalf("oldest kept index %d, want 17 (4 events kept)", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestAnIndexOlderThanTheBufferStartsAtTheOldestAndSaysSo(t *testing.T) {
	b := NewBroker(Config{BufferEvents: 3})
	for i := uint64(1); i <= 6; i++ {
		b.Publish(i, 100, []structs.Event{ev(structs.TopicJob, "j", "default")})
	}
	s, err := b.Subscribe(SubscribeRequest{Index: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Truncated || s.StartIndex != 4 {
		t.Fatalf("Truncated=%v StartIndex=%d, want true and 4", s.Truncated, s.StartIndex)
	}
	if got := indexes(drain(t, s)); fmt.Sprint(got) != "[4 5 6]" {
		t.Fatalf("got %v, want [4 5 6]", got)
	}
	s2, _ := b.Subscribe(SubscribeRequest{Index: 4})
	if s2.Truncated {
		t.Fatal("index 4 is kept, yet the subscription says it was truncated")
	}
}

func TestClosingByTokenAndShutdown(t *testing.T) {
	b := NewBroker(Config{})
	mine, _ := b.Subscribe(SubscribeRequest{Token: "acc-1"})
	other, _ := b.Subscribe(SubscribeRequest{Token: "acc-2"})
	anon, _ := b.Subscribe(SubscribeRequest{})
	b.CloseTokens([]string{"acc-1", ""})
	if !errors.Is(mine.Err(), ErrTokenDeleted) {
		t.Fatalf("subscription of the deleted token: %v", mine.Err())
	}
	if other.Err() != nil || anon.Err() != nil {
		t.Fatalf("other subscriptions closed: %v, %v", other.Err(), anon.Err())
	}
	b.Shutdown()
	if _, err := other.Next(context.Background()); !errors.Is(err, ErrShutdown) {
		t.Fatalf("after Shutdown: %v", err)
	}
	if _, err := b.Subscribe(SubscribeRequest{}); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Subscribe after Shutdown: %v", err)
	}
	b.Publish(1, 100, []structs.Event{ev(structs.TopicJob, "j", "default")}) // must not panic
}

func TestFrameJSONIsNomadsShape(t *testing.T) {
	b := NewBroker(Config{})
	b.Publish(42, 100, []structs.Event{ev(structs.TopicJob, "web", "default"), ev(structs.TopicJob, "api", "default")})
	s, _ := b.Subscribe(SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"api"}}})
	f := drain(t, s)[0]
	line := f.AppendJSON(nil)
	if line[len(line)-1] != '\n' {
		t.Fatal("a frame must end with a newline")
	}
	var got struct {
		Index  uint64
		Events []struct {
			Topic, Type, Key, Namespace string
			Index                       uint64
			Payload                     map[string]string
		}
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if got.Index != 42 || len(got.Events) != 1 || got.Events[0].Key != "api" || got.Events[0].Payload["Key"] != "api" || got.Events[0].Topic != "Job" {
		t.Fatalf("frame %s", line)
	}
	if hb := string(AppendHeartbeat(nil)); hb != "{}\n" {
		t.Fatalf("heartbeat %q", hb)
	}
}

// TestConcurrentPublishAndSubscribers runs with -race: many readers, one
// publisher, a small buffer; every reader either sees every index in
// order or is closed for falling behind, never a gap or a repeat.
func TestConcurrentPublishAndSubscribers(t *testing.T) {
	b := NewBroker(Config{BufferEvents: 64})
	const n = 2000
	var wg sync.WaitGroup
	for r := 0; r < 8; r++ {
		s, err := b.Subscribe(SubscribeRequest{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			next := uint64(1)
			for next <= n {
				f, err := s.Next(context.Background())
				if errors.Is(err, ErrFellBehind) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if f.Index != next {
					t.Errorf("got index %d, want %d", f.Index, next)
					return
				}
				next++
			}
		}()
	}
	for i := uint64(1); i <= n; i++ {
		b.Publish(i, 100, []structs.Event{ev(structs.TopicJob, "j", "default")})
	}
	wg.Wait()
}

// TestTheBufferIsBoundedByBytesToo: large entries push old batches out
// before the count does, the newest batch is kept whatever its size, and
// encoded JSON counts once it exists.
func TestTheBufferIsBoundedByBytesToo(t *testing.T) {
	b := NewBroker(Config{BufferEvents: 1000, BufferBytes: 10_000})
	for i := uint64(1); i <= 5; i++ {
		b.Publish(i, 3_000, []structs.Event{ev(structs.TopicJob, fmt.Sprint(i), "default")})
	}
	if n, bytes := b.Size(); n != 3 || bytes != 9_000 || b.Oldest() != 3 {
		t.Fatalf("kept %d events, %d bytes, oldest %d; want 3, 9000, 3", n, bytes, b.Oldest())
	}
	b.Publish(6, 50_000, []structs.Event{ev(structs.TopicJob, "huge", "default")})
	if n, bytes := b.Size(); n != 1 || bytes != 50_000 || b.Oldest() != 6 {
		t.Fatalf("after a huge entry: %d events, %d bytes, oldest %d; want only it", n, bytes, b.Oldest())
	}
	s, _ := b.Subscribe(SubscribeRequest{Index: 6})
	f := drain(t, s)[0]
	line := f.AppendJSON(nil)
	if _, bytes := b.Size(); bytes <= 50_000 || bytes > 50_000+int64(len(line)) {
		t.Fatalf("after encoding: %d bytes, want 50000 plus the event's JSON (%d)", bytes, len(line))
	}
	b.Publish(7, 100, []structs.Event{ev(structs.TopicJob, "small", "default")})
	if n, bytes := b.Size(); n != 1 || bytes != 100 {
		t.Fatalf("a dropped batch's JSON still counts: %d events, %d bytes", n, bytes)
	}
	f.AppendJSON(nil) // encoding a dropped batch again changes nothing
	if _, bytes := b.Size(); bytes != 100 {
		t.Fatalf("%d bytes after re-reading a dropped frame", bytes)
	}
}

func TestResetClosesStreamsAndEmptiesTheBuffer(t *testing.T) {
	b := NewBroker(Config{})
	b.Publish(1, 100, []structs.Event{ev(structs.TopicJob, "a", "default")})
	s, _ := b.Subscribe(SubscribeRequest{})
	b.Reset()
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrRestored) {
		t.Fatalf("after Reset: %v", err)
	}
	if n, bytes := b.Size(); n != 0 || bytes != 0 {
		t.Fatalf("after Reset: %d events, %d bytes", n, bytes)
	}
	// An index from before the reset starts at what is kept, and says so.
	b.Publish(9, 100, []structs.Event{ev(structs.TopicJob, "b", "default")})
	s2, _ := b.Subscribe(SubscribeRequest{Index: 1})
	if !s2.Truncated || s2.StartIndex != 9 {
		t.Fatalf("resuming from before a reset: Truncated=%v StartIndex=%d", s2.Truncated, s2.StartIndex)
	}
}

// TestNextSkipsBatchesWithNothingForTheSubscriber: a filtered-out batch
// does not make Next wait for the next publish.
func TestNextSkipsBatchesWithNothingForTheSubscriber(t *testing.T) {
	b := NewBroker(Config{})
	s, _ := b.Subscribe(SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicNode: {"*"}}})
	b.Publish(1, 100, []structs.Event{ev(structs.TopicJob, "j", "default")})
	b.Publish(2, 100, []structs.Event{ev(structs.TopicNode, "n", "")})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := s.Next(ctx)
	if err != nil || f.Index != 2 {
		t.Fatalf("Next after a filtered-out batch: %+v, %v", f, err)
	}
}

// TestBatchesHoldJSONOnlyOnceRead: a published batch holds no room for
// its events' JSON until a subscriber reads it; reading encodes only the
// events it receives, and every reader gets the same encoding.
func TestBatchesHoldJSONOnlyOnceRead(t *testing.T) {
	b := NewBroker(Config{})
	b.Publish(1, 100, []structs.Event{ev(structs.TopicNode, "n1", ""), ev(structs.TopicJob, "j1", "default")})
	b.Publish(2, 100, []structs.Event{ev(structs.TopicNode, "n2", "")})
	for _, bt := range b.batches {
		if bt.enc.Load() != nil {
			t.Fatalf("batch %d holds encodings before anyone read it", bt.index)
		}
	}
	var got [][]byte
	for range 2 {
		s, err := b.Subscribe(SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicNode: {"*"}}})
		if err != nil {
			t.Fatal(err)
		}
		frames := drain(t, s)
		if len(frames) != 2 {
			t.Fatalf("frames = %d, want 2", len(frames))
		}
		got = append(got, frames[0].AppendJSON(nil))
		s.Close()
	}
	enc := *b.batches[0].enc.Load()
	if len(enc) != 2 || enc[0].json == nil || enc[1].json != nil {
		t.Fatalf("after reading the node event only: %d encodings, node's %v, job's %v", len(enc), enc[0].json != nil, enc[1].json != nil)
	}
	if string(got[0]) != string(got[1]) || !strings.Contains(string(got[0]), `"Key":"n1"`) {
		t.Fatalf("readers got %s and %s", got[0], got[1])
	}
}

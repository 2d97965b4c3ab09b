// Package stream holds a server's recent events and hands them to
// subscribers: the event stream behind GET /v1/event/stream.
//
// Every server (leader or follower) produces the same events, because
// they come from its FSM applying the same raft entries (see
// nomad/fsm/events.go); this package only keeps and delivers them.
//
// # Ownership and bounds
//
// The Broker owns a bounded buffer: the newest batches (one per raft
// index that changed something) holding at most Config.BufferEvents
// events and about Config.BufferBytes of memory in all (estimated from
// the raft entries' sizes and the JSON encoded so far: an event keeps the
// objects of its entry alive). Publish, called on the FSM's goroutine, appends a batch,
// drops the oldest beyond the bound, and wakes the waiting subscribers; it
// never waits for a subscriber, so the FSM runs at its own pace whatever
// the consumers do.
//
// A Subscription is a position in that buffer (a sequence number, not a
// pointer, so a subscriber that stops reading holds no memory). Each is
// read by one goroutine, its consumer, through Next. When Publish drops a
// batch a subscription has not read yet, the subscription is closed with
// ErrFellBehind: the consumer learns that it missed events and from which
// index to ask again, instead of silently skipping them. Subscriptions are
// also closed when the ACL token they were opened with is deleted
// (ErrTokenDeleted), when the server restores a raft snapshot, whose
// changes are in no event (ErrRestored), and when the broker shuts down
// (ErrShutdown).
//
// Events are encoded to JSON at most once, lazily, by the first consumer
// that receives them; every other subscriber reuses the bytes, and an
// event no one receives is never encoded.
package stream

package structs

import "context"

// EventStreamRequest is what a consumer of /v1/event/stream asks for.
type EventStreamRequest struct {
	// Topics maps each topic to the keys wanted in it ("*" for all); an
	// empty map means every topic. TopicAll ("*") as a topic matches any.
	Topics map[Topic][]string
	// Namespace filters namespaced events ("*" for all); "" is the
	// default namespace.
	Namespace string
	// Index is the raft index to start from; 0 means the oldest kept.
	Index uint64
}

// EventSubscription is one consumer's place in a server's event stream,
// as the HTTP API serves it: frames already in the stream's JSON lines,
// so the server's broker and its buffers stay the server's.
type EventSubscription interface {
	// AppendNext waits for the next frame and appends it to buf. It
	// returns the error the subscription was closed with, or ctx's.
	AppendNext(ctx context.Context, buf []byte) ([]byte, error)
	// AppendReady appends the frames ready now, without waiting, until
	// buf holds at least limit bytes.
	AppendReady(buf []byte, limit int) ([]byte, error)
	// Done is closed when the server closes the subscription.
	Done() <-chan struct{}
	// Start is the index the stream starts at, and whether events the
	// consumer asked for were dropped before it.
	Start() (index uint64, truncated bool)
}

// eventHeartbeat is the line Nomad sends on an idle stream.
var eventHeartbeat = []byte("{}\n")

// AppendEventHeartbeat appends the heartbeat line of an idle event
// stream, {} and a newline, which consumers skip.
func AppendEventHeartbeat(buf []byte) []byte { return append(buf, eventHeartbeat...) }

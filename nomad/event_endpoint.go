package nomad

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/stream"
	"github.com/drover-sched/drover/structs"
)

// SubscribeEvents opens a subscription to this server's event stream for
// the holder of the ACL token secret, calling from client (the invalid
// Addr for a caller that is not counted per client). Every server answers
// from its own buffer: followers produce the same events as the leader.
//
// An open subscription counts as a blocking query of client
// (limits.max_blocking_queries, limits.max_blocking_queries_per_client),
// which bounds how many streams one caller can hold. The returned
// function closes the subscription and ends that count; call it exactly
// when the stream ends.
//
// With ACLs on, each topic needs what Nomad asks for: Job, Allocation,
// Evaluation, Deployment and Service need read-job in the namespace (in
// some namespace for "*", whose events are then shown only for the
// namespaces the token may read), Node needs node read, and all topics
// ("*", or none named) a management token. The subscription is closed
// when its token is deleted.
func (s *Server) SubscribeEvents(secret string, client netip.Addr, req structs.EventStreamRequest) (structs.EventSubscription, func(), error) {
	sub, done, err := s.subscribeEvents(secret, client, stream.SubscribeRequest{Topics: req.Topics, Namespace: req.Namespace, Index: req.Index})
	if err != nil {
		return nil, nil, err
	}
	return sub, done, nil
}

// subscribeEvents is SubscribeEvents with the broker's own request and
// subscription, for Event.Poll.
func (s *Server) subscribeEvents(secret string, client netip.Addr, req stream.SubscribeRequest) (*stream.Subscription, func(), error) {
	if req.Namespace == "" {
		req.Namespace = structs.DefaultNamespace
	}
	if s.config.ACLEnabled {
		tok, a, err := s.resolveSecret(s.State(), secret)
		if err != nil {
			return nil, nil, err
		}
		if err := allowEventTopics(a, req); err != nil {
			return nil, nil, err
		}
		if !a.IsManagement() && req.Namespace == acl.AllNamespaces {
			req.Allow = func(ev *structs.Event) bool {
				return ev.Namespace == "" || a.AllowNamespaceOperation(ev.Namespace, acl.NamespaceCapabilityReadJob)
			}
		}
		if tok != nil && tok.AccessorID != structs.AnonymousACLToken().AccessorID {
			req.Token = tok.AccessorID
		}
	}
	release, err := s.blockingLimits.acquire(client)
	if err != nil {
		return nil, nil, err
	}
	sub, err := s.events.Subscribe(req)
	if err != nil {
		release()
		return nil, nil, err
	}
	// The count ends before the subscription leaves the broker, so a
	// caller that sees it gone (Broker.Subscribers) finds its slot free.
	return sub, func() { release(); sub.Close() }, nil
}

// allowEventTopics refuses a subscription to a topic the ACL does not let
// its holder read, naming what the token lacks.
func allowEventTopics(a *acl.ACL, req stream.SubscribeRequest) error {
	if a.IsManagement() {
		return nil
	}
	if _, all := req.Topics[structs.TopicAll]; all || len(req.Topics) == 0 {
		return fmt.Errorf("%w: every topic (topic=* or none named) needs a management token; name the topics to read instead, such as topic=Job",
			structs.ErrPermissionDenied)
	}
	for topic := range req.Topics {
		switch topic {
		case structs.TopicNode:
			if !a.AllowNodeRead() {
				return fmt.Errorf(`%w: topic Node needs node { policy = "read" }`, structs.ErrPermissionDenied)
			}
		default:
			if !a.AllowNamespaceOperation(req.Namespace, acl.NamespaceCapabilityReadJob) {
				return fmt.Errorf("%w: topic %s needs read-job in namespace %q", structs.ErrPermissionDenied, topic, req.Namespace)
			}
		}
	}
	return nil
}

// EventBroker is this server's event buffer, for tests and metrics.
func (s *Server) EventBroker() *stream.Broker { return s.events }

// Event is the RPC endpoint of the event stream, for agents without a
// server, which relay /v1/event/stream by polling it. Any server answers
// from its own buffer; nothing is forwarded to the leader.
type Event struct {
	srv eventServer
}

// eventServer is what Event uses of the server.
type eventServer interface {
	serverLifetime
	subscribeEvents(secret string, client netip.Addr, req stream.SubscribeRequest) (*stream.Subscription, func(), error)
}

var _ eventServer = (*Server)(nil)

// Event.Poll bounds.
const (
	// eventPollWait is the default and longest wait of one poll: the
	// relaying agent sends a heartbeat after each empty poll, as often as
	// a server's stream would.
	eventPollWait = 10 * time.Second
	// eventPollBytes bounds the frames of one answer (one frame may pass
	// it alone), well under the RPC message limit.
	eventPollBytes = 4 << 20
)

// Poll returns the events from args.Index on that the token may read.
func (e *Event) Poll(args *structs.EventPollRequest, reply *structs.EventPollResponse) error {
	req := stream.SubscribeRequest{Topics: args.Topics, Namespace: args.Namespace, Index: args.Index}
	sub, done, err := e.srv.subscribeEvents(args.AuthToken, blockingClient(&args.QueryOptions), req)
	if err != nil {
		return err
	}
	defer done()
	reply.NextIndex, reply.StartIndex, reply.Truncated = args.Index, sub.StartIndex, sub.Truncated
	if args.Resume && sub.Truncated && args.Index > 0 {
		reply.Closed = fmt.Sprintf("%v: events from index %d on were dropped before this stream read them; reconnect with index=%d to resume from the oldest kept",
			stream.ErrFellBehind, args.Index, sub.StartIndex)
		return nil
	}
	var f *stream.Frame
	if args.NoWait {
		f, err = sub.TryNext()
	} else {
		wait := args.MaxQueryTime
		if wait <= 0 || wait > eventPollWait {
			wait = eventPollWait
		}
		ctx, cancel := context.WithTimeout(e.srv.lifetime(), wait)
		defer cancel()
		stop := context.AfterFunc(args.CallContext(), cancel)
		defer stop()
		f, err = sub.Next(ctx)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			f, err = nil, nil
		}
	}
	size := 0
	for err == nil && f != nil {
		line := f.AppendJSON(nil)
		reply.Frames = append(reply.Frames, line)
		if size += len(line); size >= eventPollBytes {
			break
		}
		f, err = sub.TryNext()
	}
	if last := sub.LastIndex(); last > 0 {
		reply.NextIndex = last + 1
	}
	if err != nil {
		reply.Closed = err.Error()
	}
	return nil
}

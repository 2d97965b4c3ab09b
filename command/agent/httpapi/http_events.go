package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/drover-sched/drover/structs"
)

// GET /v1/event/stream: the event stream in Nomad's shape. The answer is
// a 200 followed by newline-delimited JSON frames, {"Index":N,"Events":
// [...]} for the events of each raft index and {} as a heartbeat when
// nothing happened for eventHeartbeat, flushed as they come, until the
// caller goes away, the agent shuts down, or the server closes the
// subscription; then a last frame {"Error":"..."} says why, when the
// caller is still reading.
//
// A stream is a blocking query for the limits (see
// nomad.Server.SubscribeEvents) and holds one HTTP connection
// (limits.http_max_conns_per_client). An agent without a server relays
// the stream of one of its servers (http_events_relay.go).

// Event stream timings.
const (
	// eventHeartbeat is how long a stream may stay silent before a {}
	// frame tells the caller (and proxies) it is alive; Nomad's interval.
	eventHeartbeat = 10 * time.Second
	// eventCloseGrace is how long a stream the server has closed may take
	// to write its last frame before its connection is cut: a consumer
	// that stopped reading blocks that write for good.
	eventCloseGrace = 5 * time.Second
	// eventWriteBatch is how many bytes of ready frames are written at
	// once before a flush.
	eventWriteBatch = 256 << 10
	// maxEventTopics bounds the topic parameters of one request.
	maxEventTopics = 64
)

// EventSubscriber is a server that serves the event stream; *nomad.Server
// is one.
type EventSubscriber interface {
	SubscribeEvents(secret string, client netip.Addr, req structs.EventStreamRequest) (structs.EventSubscription, func(), error)
}

func (s *httpAPI) routeEvents(mux *http.ServeMux) {
	s.handleFunc(mux, "GET /v1/event/stream", s.eventStream)
}

func (s *httpAPI) eventStream(w http.ResponseWriter, r *http.Request) {
	req, err := parseEventStreamQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	srv, ok := s.server.(EventSubscriber)
	if !ok {
		// An agent without a server relays its servers' stream.
		s.relayEvents(w, r, req, eventHeartbeat)
		return
	}
	var client netip.Addr
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		client = ap.Addr().Unmap()
	}
	sub, done, err := srv.SubscribeEvents(authToken(r), client, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer done()
	s.serveEvents(w, r, sub, eventHeartbeat)
}

// parseEventStreamQuery reads ?topic=Topic[:key] (repeated), ?namespace=
// and ?index= as Nomad does.
func parseEventStreamQuery(r *http.Request) (structs.EventStreamRequest, error) {
	q := r.URL.Query()
	req := structs.EventStreamRequest{Namespace: q.Get("namespace")}
	if v := q.Get("index"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return req, badRequest("invalid index %q: must be a raft index (a whole number, 0 for the oldest event kept)", v)
		}
		req.Index = idx
	}
	topics := q["topic"]
	if len(topics) > maxEventTopics {
		return req, badRequest("too many topic parameters: %d, at most %d", len(topics), maxEventTopics)
	}
	for _, t := range topics {
		name, key, hasKey := strings.Cut(t, ":")
		topic, ok := parseTopic(name)
		if !ok {
			return req, badRequest("invalid topic %q: the topic must be one of %s or *, optionally followed by :key (topic=Job:web)", t, topicNames())
		}
		if hasKey && key == "" {
			return req, badRequest("invalid topic %q: the key after ':' is empty; use %s:* for every key", t, name)
		}
		if !hasKey {
			key = "*"
		}
		if req.Topics == nil {
			req.Topics = map[structs.Topic][]string{}
		}
		req.Topics[topic] = append(req.Topics[topic], key)
	}
	return req, nil
}

func parseTopic(name string) (structs.Topic, bool) {
	if name == string(structs.TopicAll) {
		return structs.TopicAll, true
	}
	for _, t := range structs.EventTopics {
		if string(t) == name {
			return t, true
		}
	}
	return "", false
}

func topicNames() string {
	names := make([]string, len(structs.EventTopics))
	for i, t := range structs.EventTopics {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// serveEvents writes sub's frames to w until the caller goes, the agent
// shuts down (the request's context ends) or the server closes sub, and a
// heartbeat after every silence of the given length.
func (s *httpAPI) serveEvents(w http.ResponseWriter, r *http.Request, sub structs.EventSubscription, heartbeat time.Duration) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/json")
	start, truncated := sub.Start()
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(max(start, 1), 10))
	if truncated {
		// Nomad starts at the oldest event kept without a word; Drover
		// says so, since the caller has missed events.
		w.Header().Set("X-Drover-Events-Truncated", fmt.Sprintf("events before index %d were dropped from the server's buffer; the stream starts there", start))
	}
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}

	// A consumer that stops reading blocks a write for good once the
	// connection's buffers are full; when the server drops it, or the
	// agent shuts down, cut the connection after a grace for the last
	// frame, which ends the blocked write.
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-finished:
			return
		case <-sub.Done():
		case <-r.Context().Done():
		}
		t := time.NewTimer(eventCloseGrace)
		defer t.Stop()
		select {
		case <-finished:
		case <-t.C:
			rc.SetWriteDeadline(time.Now())
		}
	}()

	var buf []byte
	for {
		ctx, cancel := context.WithTimeout(r.Context(), heartbeat)
		var err error
		buf, err = sub.AppendNext(ctx, buf[:0])
		cancel()
		switch {
		case err == nil:
			// A burst is written and flushed at once.
			buf, err = sub.AppendReady(buf, eventWriteBatch)
		case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
			buf, err = structs.AppendEventHeartbeat(buf[:0]), nil
		case r.Context().Err() != nil:
			return
		}
		if len(buf) > 0 {
			if _, werr := w.Write(buf); werr != nil {
				return
			}
			if werr := rc.Flush(); werr != nil {
				return
			}
			buf = buf[:0]
		}
		if err != nil {
			s.logger.Debug("event stream closed", "remote", r.RemoteAddr, "reason", err)
			buf = appendCloseFrame(buf[:0], err)
			w.Write(buf)
			rc.Flush()
			// End the connection, not only the response: a dropped
			// consumer must not keep its connection (and its slot in
			// limits.http_max_conns_per_client) as an idle keep-alive,
			// and an unfinished body tells every client that the stream
			// did not end normally.
			panic(http.ErrAbortHandler)
		}
	}
}

// appendCloseFrame appends the last frame of a stream the server closed:
// {"Error":"why"} for people and scripts reading the stream. Nomad's Go
// client skips it as it skips a heartbeat (it has no Index and no
// Events), then reports the end of the stream.
func appendCloseFrame(buf []byte, err error) []byte {
	msg, _ := json.Marshal(err.Error())
	buf = append(buf, `{"Error":`...)
	buf = append(buf, msg...)
	return append(buf, "}\n"...)
}

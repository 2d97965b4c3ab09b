package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/drover-sched/drover/structs"
)

// eventRelayWriteTimeout bounds one write of a relayed stream: the relay
// holds no subscription between polls, so a consumer that stops reading
// costs the servers nothing, and this bounds what it costs this agent (a
// goroutine and a connection).
const eventRelayWriteTimeout = time.Minute

// relayEvents serves /v1/event/stream on an agent without a server: it
// polls a server (Event.Poll), which checks the token and filters, and
// writes the frames it returns. The first poll does not wait, so a
// refused request is answered with its error before the 200. A poll that
// finds the events it would resume from dropped ends the stream, as a
// server's own stream ends a consumer that fell behind.
func (s *httpAPI) relayEvents(w http.ResponseWriter, r *http.Request, req structs.EventStreamRequest, heartbeat time.Duration) {
	args := structs.EventPollRequest{Topics: req.Topics, Index: req.Index, NoWait: true}
	args.Namespace, args.Region, args.AuthToken = req.Namespace, s.region(r), authToken(r)
	var reply structs.EventPollResponse
	if err := s.call(r, "Event.Poll", &args, &reply); err != nil {
		s.writeError(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(max(reply.StartIndex, 1), 10))
	if reply.Truncated {
		w.Header().Set("X-Drover-Events-Truncated", "events before index "+strconv.FormatUint(reply.StartIndex, 10)+
			" were dropped from the server's buffer; the stream starts there")
	}
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(eventRelayWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(nil) {
		return
	}
	first := true
	for {
		for _, f := range reply.Frames {
			if !write(f) {
				return
			}
		}
		if len(reply.Frames) == 0 && !first && !write(structs.AppendEventHeartbeat(nil)) {
			return
		}
		if reply.Closed != "" {
			s.logger.Debug("event stream closed", "remote", r.RemoteAddr, "reason", reply.Closed)
			write(appendCloseFrame(nil, errString(reply.Closed)))
			panic(http.ErrAbortHandler) // see serveEvents
		}
		first = false
		args.Index, args.Resume, args.NoWait, args.MaxQueryTime = reply.NextIndex, true, false, heartbeat
		reply = structs.EventPollResponse{}
		if err := s.call(r, "Event.Poll", &args, &reply); err != nil {
			if r.Context().Err() != nil {
				return
			}
			s.logger.Warn("relaying the event stream failed", "remote", r.RemoteAddr, "error", err)
			write(appendCloseFrame(nil, errString("relaying the event stream from the servers failed: "+err.Error()+
				"; reconnect with index="+strconv.FormatUint(args.Index, 10))))
			panic(http.ErrAbortHandler)
		}
	}
}

// errString is an error of a message that came as text.
type errString string

func (e errString) Error() string { return string(e) }

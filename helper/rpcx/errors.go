package rpcx

import (
	"errors"
	"net/rpc"
	"strings"
)

// Sentinel errors. Callers branch on these with errors.Is; the transport
// wraps them with the address and method involved.
var (
	// ErrShutdown is returned by a Server or ConnPool that has been shut down.
	ErrShutdown = errors.New("rpcx: shut down")

	// ErrMessageTooLarge means a message (request or response header plus
	// body) is larger than the configured limit. The peer that sent it has
	// its connection or stream closed; a local caller that tried to send it
	// gets this error before anything is written.
	ErrMessageTooLarge = errors.New("rpcx: message too large")

	// ErrMalformedMessage means the bytes on the wire are not a well-formed
	// msgpack value (reserved type byte, nesting too deep). The connection
	// cannot be resynchronised and is closed.
	ErrMalformedMessage = errors.New("rpcx: malformed message")
)

// IsRemoteError reports whether err is an error returned by the remote RPC
// handler (an rpc.ServerError), as opposed to a transport failure. A remote
// error means the call reached a server and ran; a transport failure means it
// may not have, so only then is trying another server worth it.
func IsRemoteError(err error) bool {
	var se rpc.ServerError
	return errors.As(err, &se)
}

// IsErr reports whether err is sentinel, either locally (errors.Is) or as a
// remote handler error whose text contains sentinel's text. net/rpc carries
// only the message string across the wire, so a handler that returns
// fmt.Errorf("apply: %w", ErrNotLeader) arrives as the string
// "apply: not leader"; substring matching is the best that can be done.
// Sentinels with short or generic messages can match by accident: give
// sentinels that cross the wire distinctive text.
func IsErr(err, sentinel error) bool {
	if err == nil || sentinel == nil {
		return false
	}
	if errors.Is(err, sentinel) {
		return true
	}
	var se rpc.ServerError
	if errors.As(err, &se) {
		return strings.Contains(string(se), sentinel.Error())
	}
	return false
}

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

// ErrorCoder is an error that keeps its identity across RPC: a handler
// error that is or wraps one (found with errors.As) is sent with its code
// next to its text, and the caller gets a RemoteError that errors.Is
// matches against every error with the same code. Drover's sentinels are
// structs.CodedError values; this package knows none of their codes.
type ErrorCoder interface {
	error
	ErrorCode() string
}

// RemoteError is an error returned by a remote handler (or by the handler
// of an in-process Server.Call), as the caller receives it: the handler's
// text, and the code of the ErrorCoder it wrapped, if any.
//
// errors.Is(err, sentinel) holds when sentinel is an ErrorCoder with the
// same code; an error without a code is plain text and matches no
// sentinel. Only an answer from a peer that sends no codes at all (Legacy:
// a Drover of an earlier release) is matched by its text instead: a
// sentinel matches if the text contains the sentinel's, which is all such
// an answer allows.
//
// It unwraps to an rpc.ServerError with the same text, so code written for
// net/rpc's errors (IsRemoteError, errors.As with an rpc.ServerError) works
// unchanged. It is itself an ErrorCoder, so a server that forwards a call
// and returns the answer's error passes the code on.
type RemoteError struct {
	// Text is the handler's error text, with the context it was wrapped in.
	Text string
	// Code is the ErrorCode of the sentinel the handler's error wrapped,
	// or empty.
	Code string
	// Legacy is set when the peer sent no code field at all, as peers
	// that predate error codes do.
	Legacy bool
}

// Error returns the handler's text.
func (e *RemoteError) Error() string { return e.Text }

// ErrorCode returns the code the handler sent.
func (e *RemoteError) ErrorCode() string { return e.Code }

// Unwrap gives the error as net/rpc would have: an rpc.ServerError.
func (e *RemoteError) Unwrap() error { return rpc.ServerError(e.Text) }

// Is matches target by its code (see RemoteError).
func (e *RemoteError) Is(target error) bool {
	c, ok := target.(ErrorCoder)
	if !ok || c.ErrorCode() == "" {
		return false
	}
	if e.Legacy {
		return strings.Contains(e.Text, c.Error())
	}
	return e.Code == c.ErrorCode()
}

// NewRemoteError returns err as a caller of a remote handler that returned
// it receives it: its text, and the code of the ErrorCoder in its chain.
func NewRemoteError(err error) *RemoteError {
	return &RemoteError{Text: err.Error(), Code: errorCode(err)}
}

// noCode is the wire's ErrorCode for an error that has none. An error
// answer always carries a code field, so a caller can tell a plain error
// from the answer of a peer that sends no codes (RemoteError.Legacy).
const noCode = "-"

// errorCode is the code of the first ErrorCoder in err's chain, or "".
func errorCode(err error) string {
	var c ErrorCoder
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

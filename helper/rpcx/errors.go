package rpcx

import (
	"errors"
	"net/rpc"
	"slices"
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

	// ErrMessageTooSlow means a message that held part of a server's read
	// budget did not arrive whole within its message read timeout
	// (WithMessageReadTimeout). The peer that sent it is told so and has
	// its connection or stream closed.
	ErrMessageTooSlow = errors.New("rpcx: message arrived too slowly")
)

// IsRemoteError reports whether err is an error returned by the remote RPC
// handler (an rpc.ServerError), as opposed to a transport failure. A remote
// error means the call reached a server and ran; a transport failure means it
// may not have, so only then is trying another server worth it.
func IsRemoteError(err error) bool {
	var se rpc.ServerError
	return errors.As(err, &se)
}

// ErrUnknownService and ErrUnknownMethod answer a call to a service or
// method the server does not have; the texts are net/rpc's, which older
// peers send.
var (
	ErrUnknownService ErrorCoder = &sentinel{code: "rpcx.UnknownService", text: "rpc: can't find service"}
	ErrUnknownMethod  ErrorCoder = &sentinel{code: "rpcx.UnknownMethod", text: "rpc: can't find method"}
)

// sentinel is this package's own ErrorCoder.
type sentinel struct{ code, text string }

func (e *sentinel) Error() string     { return e.text }
func (e *sentinel) ErrorCode() string { return e.code }

// ErrorCoder is an error that keeps its identity across RPC: a handler
// error that is or wraps one is sent with its code next to its text, and
// the caller gets a RemoteError that errors.Is matches against every error
// with the same code. Drover's sentinels are structs.CodedError values;
// this package knows none of their codes. A code must not contain a space.
type ErrorCoder interface {
	error
	ErrorCode() string
}

// RemoteError is an error returned by a remote handler (or by the handler
// of an in-process Server.Call), as the caller receives it: the handler's
// text, and the codes of every ErrorCoder it wrapped (an error may wrap
// several, as fmt.Errorf("%w: %w", ErrBadRequest, ErrScalingBlocked) does).
//
// errors.Is(err, sentinel) holds when sentinel is an ErrorCoder whose code
// is among the codes; an error without a code is plain text and matches no
// sentinel. Only an answer from a peer that sends no codes at all (Legacy:
// a Drover of an earlier release) is matched by its text instead: a
// sentinel matches if the text contains the sentinel's, which is all such
// an answer allows.
//
// It unwraps to an rpc.ServerError with the same text, so code written for
// net/rpc's errors (IsRemoteError, errors.As with an rpc.ServerError) works
// unchanged. A server that forwards a call and returns the answer's error,
// wrapped or not, passes its codes on.
type RemoteError struct {
	// Text is the handler's error text, with the context it was wrapped in.
	Text string
	// Codes are the ErrorCodes of the sentinels the handler's error
	// wrapped, in the order errors.Is would meet them.
	Codes []string
	// Legacy is set when the peer sent no code field at all, as peers
	// that predate error codes do.
	Legacy bool
}

// Error returns the handler's text.
func (e *RemoteError) Error() string { return e.Text }

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
	return slices.Contains(e.Codes, c.ErrorCode())
}

// NewRemoteError returns err as a caller of a remote handler that returned
// it receives it: its text, and the codes of the ErrorCoders in its chain.
func NewRemoteError(err error) *RemoteError {
	return &RemoteError{Text: err.Error(), Codes: errorCodes(err, nil)}
}

// noCode is the wire's ErrorCode for an error that has none. An error
// answer always carries a code field, so a caller can tell a plain error
// from the answer of a peer that sends no codes (RemoteError.Legacy).
const noCode = "-"

// errorCodes appends the codes of the ErrorCoders in err's tree, and those
// a RemoteError in it brought, in errors.Is order, each once.
func errorCodes(err error, codes []string) []string {
	add := func(c string) {
		if c != "" && !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	switch e := err.(type) {
	case nil:
		return codes
	case *RemoteError:
		for _, c := range e.Codes {
			add(c)
		}
		return codes
	case ErrorCoder:
		add(e.ErrorCode())
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		codes = errorCodes(u.Unwrap(), codes)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			codes = errorCodes(e, codes)
		}
	}
	return codes
}

// encodeCodes and decodeCodes give the wire form of a RemoteError's codes:
// one string, the codes separated by spaces, or noCode.
func encodeCodes(codes []string) string {
	if len(codes) == 0 {
		return noCode
	}
	return strings.Join(codes, " ")
}

func decodeCodes(wire string) []string {
	if wire == noCode || wire == "" {
		return nil
	}
	return strings.Fields(wire)
}

// LegacyRemoteError returns err as a Legacy RemoteError if it is the answer
// of a peer that sends no error codes: a RemoteError marked Legacy, or a
// bare rpc.ServerError as net/rpc's own client returns. errors.Is matches
// the result by text, as much as such an answer allows. For any other error
// it returns nil.
func LegacyRemoteError(err error) *RemoteError {
	var re *RemoteError
	if errors.As(err, &re) {
		if re.Legacy {
			return re
		}
		return nil
	}
	var se rpc.ServerError
	if errors.As(err, &se) {
		return &RemoteError{Text: err.Error(), Legacy: true}
	}
	return nil
}

package agent

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

// codedError is an error with the HTTP status it should produce, for the
// cases the handler itself decides (a missing job, a malformed parameter).
type codedError struct {
	code int
	msg  string
}

func (e *codedError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &codedError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &codedError{code: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

// errorStatus maps an error to a status. Errors from the servers usually
// arrive as bare strings (net/rpc keeps only the text), so besides typed
// errors the text is checked for the markers the servers use: the
// "bad request" prefix for caller mistakes, "not found", the index
// conflict of a check-and-set register, and net/rpc's own "can't find
// method" for endpoints the server does not have yet.
func errorStatus(err error) int {
	var ce *codedError
	var ve *structs.ValidationError
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ve), errors.Is(err, nomad.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, nomad.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, client.ErrUnknownAlloc), errors.Is(err, client.ErrUnknownTask):
		return http.StatusNotFound
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, nomad.ErrBadRequest.Error()) || strings.Contains(msg, nomad.ErrBadRequest.Error()+": "):
		return http.StatusBadRequest
	case strings.HasPrefix(msg, nomad.ErrTooLarge.Error()) || strings.Contains(msg, nomad.ErrTooLarge.Error()+": "):
		return http.StatusRequestEntityTooLarge
	case structs.IsErr(err, nomad.ErrTooManyBlockingQueries):
		return http.StatusTooManyRequests
	case strings.Contains(strings.ToLower(msg), strings.ToLower(structs.ErrIndexConflict.Error())):
		// Case-blind: servers of earlier releases wrote it in lower case.
		return http.StatusConflict
	case isMissingMethod(err):
		return http.StatusNotImplemented
	case structs.IsErr(err, structs.ErrPermissionDenied), structs.IsErr(err, structs.ErrJobRegistrationDisabled),
		structs.IsErr(err, structs.ErrTokenNotFound):
		return http.StatusForbidden
	case structs.IsErr(err, structs.ErrACLDisabled), structs.IsErr(err, structs.ErrACLBootstrapDone):
		return http.StatusBadRequest
	case strings.Contains(strings.ToLower(msg), "not found"):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// isMissingMethod reports the net/rpc error for an unknown endpoint.
func isMissingMethod(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "can't find method") || strings.Contains(msg, "can't find service")
}

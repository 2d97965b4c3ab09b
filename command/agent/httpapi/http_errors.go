package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/rpcx"
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

// errorStatus maps an error to a status by what it is: the sentinels the
// servers and the client wrap keep their identity across RPC (see
// rpcx.RemoteError), and the handler's own errors carry their status. Only
// the answer of a server that sends no error codes (an earlier release) is
// read by its text: see legacyStatus.
func errorStatus(err error) int {
	if legacy := rpcx.LegacyRemoteError(err); legacy != nil {
		return legacyStatus(legacy)
	}
	var ce *codedError
	var ve *structs.ValidationError
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ve):
		return http.StatusBadRequest
	}
	if code := sentinelStatus(err); code != 0 {
		return code
	}
	return http.StatusInternalServerError
}

// sentinelStatus is the status of the first sentinel err matches, or 0.
// An error wrapping several (a local chain can) gets the first listed.
func sentinelStatus(err error) int {
	switch {
	case errors.Is(err, nomad.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, nomad.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, client.ErrUnknownAlloc), errors.Is(err, client.ErrUnknownTask):
		return http.StatusNotFound
	case errors.Is(err, nomad.ErrTooManyBlockingQueries):
		return http.StatusTooManyRequests
	case errors.Is(err, structs.ErrIndexConflict):
		return http.StatusConflict
	case isMissingMethod(err):
		return http.StatusNotImplemented
	case errors.Is(err, structs.ErrPermissionDenied), errors.Is(err, structs.ErrJobRegistrationDisabled),
		errors.Is(err, structs.ErrTokenNotFound):
		return http.StatusForbidden
	case errors.Is(err, structs.ErrACLDisabled), errors.Is(err, structs.ErrACLBootstrapDone):
		return http.StatusBadRequest
	case errors.Is(err, structs.ErrNotFound), errors.Is(err, drivers.ErrTaskNotFound):
		return http.StatusNotFound
	}
	return 0
}

// legacyStatus maps the answer of a server that sends no error codes.
// errors.Is matches its sentinels by text (see rpcx.LegacyRemoteError);
// past those, such servers wrote the index conflict in lower case and said
// "not found" of anything missing.
func legacyStatus(err *rpcx.RemoteError) int {
	if code := sentinelStatus(err); code != 0 {
		return code
	}
	msg := strings.ToLower(err.Text)
	switch {
	case strings.Contains(msg, strings.ToLower(structs.ErrIndexConflict.Error())):
		return http.StatusConflict
	case strings.Contains(msg, "not found"):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// isMissingMethod reports the answer to a call of an endpoint the server
// does not have.
func isMissingMethod(err error) bool {
	if legacy := rpcx.LegacyRemoteError(err); legacy != nil {
		err = legacy
	}
	return errors.Is(err, rpcx.ErrUnknownMethod) || errors.Is(err, rpcx.ErrUnknownService)
}

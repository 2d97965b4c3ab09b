package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxErrorBody bounds how much of an error response is kept; an agent's
// error bodies are one line, and anything longer is not worth printing.
const maxErrorBody = 64 << 10

// UnexpectedResponseError is returned for any non-2xx answer. Callers branch
// on StatusCode (404 means "no such object", 400 "bad input", 409 a failed
// check-index) and show Body, which is the agent's explanation.
type UnexpectedResponseError struct {
	StatusCode int
	Status     string
	Body       string
	Method     string
	Path       string
}

func newUnexpectedResponseError(r *request, resp *http.Response) *UnexpectedResponseError {
	buf, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &UnexpectedResponseError{
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Body:       strings.TrimSpace(string(buf)),
		Method:     r.method,
		Path:       r.path,
	}
}

// Error reads like Nomad's client error, which scripts and people already
// recognise: "Unexpected response code: 404 (job not found)".
func (e *UnexpectedResponseError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("Unexpected response code: %d", e.StatusCode)
	}
	return fmt.Sprintf("Unexpected response code: %d (%s)", e.StatusCode, e.Body)
}

// HasStatusCode reports whether err is an UnexpectedResponseError with the
// given status code.
func HasStatusCode(err error, code int) bool {
	var ure *UnexpectedResponseError
	return errors.As(err, &ure) && ure.StatusCode == code
}

// IsNotFound reports whether err says the object asked for does not exist.
func IsNotFound(err error) bool { return HasStatusCode(err, http.StatusNotFound) }

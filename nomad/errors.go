package nomad

import (
	"errors"
	"fmt"
)

// ErrBadRequest marks an error caused by the caller's input; the HTTP layer
// maps it to 400. Its text says which field was wrong and why.
var ErrBadRequest = errors.New("bad request")

func errBadRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

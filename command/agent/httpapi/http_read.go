package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

// read makes a read that is one RPC: the request's query options
// (parseQuery) go into q, which args holds, the call fills out, and meta
// (out's QueryMeta) becomes the answer's headers (setMeta). On an error
// nothing is written.
func (s *httpAPI) read(w http.ResponseWriter, r *http.Request, q *structs.QueryOptions, method string, args, out any, meta *structs.QueryMeta) error {
	if err := s.parseQuery(r, q); err != nil {
		return err
	}
	if err := s.call(r, method, args, out); err != nil {
		return err
	}
	setMeta(w, meta)
	return nil
}

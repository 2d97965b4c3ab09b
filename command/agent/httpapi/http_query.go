package httpapi

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-sched/drover/structs"
)

// maxQueryTime caps ?wait=, so a client cannot hold a request (and a
// server goroutine) forever; Nomad caps it the same way.
const maxQueryTime = 10 * time.Minute

// parseQuery fills the read options every GET takes: ?index= and ?wait=
// make it a blocking query, ?stale lets a follower answer, ?prefix=,
// ?namespace= ("default" when absent, "*" for all) and ?region= route it,
// ?per_page= and ?next_token= page it (see paginate). ?filter= is refused
// here: only the list endpoints evaluate it (parseListQuery), and any
// other read answering in full would look like a filter that matched all.
func (s *httpAPI) parseQuery(r *http.Request, q *structs.QueryOptions) error {
	if err := s.parseQueryOptions(r, q); err != nil {
		return err
	}
	if f := r.URL.Query().Get("filter"); f != "" {
		return badRequest("filter expressions (?filter=%q) are only evaluated by the list endpoints "+
			"(/v1/jobs, /v1/nodes, /v1/allocations, /v1/evaluations, /v1/deployments), not by %s", f, r.URL.Path)
	}
	return nil
}

// parseListQuery is parseQuery for the list endpoints, which also take
// ?filter=: the expression is parsed before any RPC, so a malformed one is
// a 400 that reads nothing; a nil filter matches everything.
func (s *httpAPI) parseListQuery(r *http.Request, q *structs.QueryOptions) (*listFilter, error) {
	if err := s.parseQueryOptions(r, q); err != nil {
		return nil, err
	}
	return parseFilter(r.URL.Query().Get("filter"))
}

// parseQueryOptions fills q from the parameters parseQuery describes.
func (s *httpAPI) parseQueryOptions(r *http.Request, q *structs.QueryOptions) error {
	v := r.URL.Query()
	if idx := v.Get("index"); idx != "" {
		n, err := strconv.ParseUint(idx, 10, 64)
		if err != nil {
			return badRequest("invalid index %q: must be a non-negative integer", idx)
		}
		q.MinQueryIndex = n
	}
	if wait := v.Get("wait"); wait != "" {
		d, err := time.ParseDuration(wait)
		if err != nil || d < 0 {
			return badRequest("invalid wait %q: must be a duration such as \"5s\" or \"1m\"", wait)
		}
		q.MaxQueryTime = min(d, maxQueryTime)
	}
	if stale, ok := v["stale"]; ok {
		q.AllowStale = len(stale) == 0 || stale[0] == "" || stale[0] == "true"
	}
	q.Prefix = v.Get("prefix")
	q.Namespace = s.namespace(r)
	q.Region = s.region(r)
	q.AuthToken = authToken(r)
	if pp := v.Get("per_page"); pp != "" {
		n, err := strconv.ParseInt(pp, 10, 32)
		if err != nil || n < 0 {
			return badRequest("invalid per_page %q: must be a non-negative integer", pp)
		}
		q.PerPage = int32(n)
	}
	q.NextToken = v.Get("next_token")
	return nil
}

// paginate applies ?filter= (see listFilter), then ?per_page= and
// ?next_token=, to a list the server answered whole (it neither filters
// nor pages yet). Filtering comes first, as in Nomad, so per_page counts
// matching objects and a next token names the next match. With per_page
// or next_token set, the list is ordered by key, starts at the first key
// >= next_token and holds at most per_page items; X-Nomad-NextToken is
// the key of the item after it. Nomad's tokens are opaque to its client,
// which only sends them back. A list the server already paged (it set a
// next token) is not paged again, only filtered, so its page may come
// out short. An expression that cannot be evaluated on the objects (a
// selector naming no field) is a 400.
func paginate[T any](q *structs.QueryOptions, m *structs.QueryMeta, f *listFilter, list []T, key func(T) string) ([]T, error) {
	list, err := filterList(f, list)
	if err != nil {
		return nil, err
	}
	if (q.PerPage <= 0 && q.NextToken == "") || m.NextToken != "" {
		return list, nil
	}
	sorted := append([]T(nil), list...)
	sort.SliceStable(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	start := sort.Search(len(sorted), func(i int) bool { return key(sorted[i]) >= q.NextToken })
	sorted = sorted[start:]
	if q.PerPage > 0 && len(sorted) > int(q.PerPage) {
		m.NextToken = key(sorted[q.PerPage])
		sorted = sorted[:q.PerPage]
	}
	return sorted, nil
}

// checkBodyID rejects a body whose ID field (key: JobID, DeploymentID)
// names another object than the path's {id}; an empty one takes the
// path's.
func checkBodyID(r *http.Request, key string, bodyID *string) error {
	id := r.PathValue("id")
	if *bodyID != "" && *bodyID != id {
		return badRequest("%s %q in the body does not match %q in the path", key, *bodyID, id)
	}
	*bodyID = id
	return nil
}

// parseWrite fills the routing fields every write takes.
func (s *httpAPI) parseWrite(r *http.Request, w *structs.WriteRequest) {
	w.Namespace = s.namespace(r)
	w.Region = s.region(r)
	w.AuthToken = authToken(r)
}

func (s *httpAPI) namespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return structs.DefaultNamespace
}

func (s *httpAPI) region(r *http.Request) string {
	if reg := r.URL.Query().Get("region"); reg != "" {
		return reg
	}
	if c := s.config(); c != nil && c.Region != "" {
		return c.Region
	}
	return structs.DefaultRegion
}

// authToken is the one place the HTTP API reads a request's ACL token,
// for every endpoint: the X-Nomad-Token header, else an
// "Authorization: Bearer <secret>" header (the scheme in any case), else
// the ?token= query parameter, as Nomad accepts them. "" means no token:
// the anonymous policy applies.
func authToken(r *http.Request) string {
	if t := strings.TrimSpace(r.Header.Get("X-Nomad-Token")); t != "" {
		return t
	}
	if scheme, value, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "Bearer") {
		// A bearer token has no spaces (RFC 6750); take its first word.
		if fields := strings.Fields(value); len(fields) > 0 {
			return fields[0]
		}
	}
	return strings.TrimSpace(r.URL.Query().Get("token"))
}

// setMeta writes the headers of a read: the index the answer reflects (so
// the caller can block on the next change), whether the server knew a
// leader, and how stale a follower's answer may be (in milliseconds).
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	setIndex(w, m.Index)
	w.Header().Set("X-Nomad-KnownLeader", strconv.FormatBool(m.KnownLeader))
	w.Header().Set("X-Nomad-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
	if m.NextToken != "" {
		w.Header().Set("X-Nomad-NextToken", m.NextToken)
	}
}

// setIndex writes X-Nomad-Index. An index of 0 is sent as 1: a client
// blocking on index 0 would return at once, forever, in a busy loop.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(max(index, 1), 10))
}

// boolParam reads a boolean query parameter; present without a value
// means true (?purge).
func boolParam(r *http.Request, name string) (bool, error) {
	v, ok := r.URL.Query()[name]
	if !ok {
		return false, nil
	}
	if len(v) == 0 || v[0] == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, badRequest("invalid %s %q: must be true or false", name, v[0])
	}
	return b, nil
}

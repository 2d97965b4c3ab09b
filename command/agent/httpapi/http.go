package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/telemetry"
)

// httpAPI serves Nomad's v1 HTTP API. Every handler turns a request into
// one RPC (or a local client call) and the answer into Nomad's JSON; all
// the state lives on the servers. Handlers are grouped one resource per
// file (http_jobs.go, http_nodes.go, ...).
type httpAPI struct {
	rpc    RPCer
	client Client // nil on an agent without a client
	server Server // nil on an agent without a server
	// info describes the agent as it is now (the configuration changes on
	// reload), for /v1/agent/self and defaults such as the region.
	info   func() AgentInfo
	logger hclog.Logger
	// forward carries client requests (logs, stats) to the agent that
	// runs the allocation.
	forward *http.Client
	// scheme is "https" when the agents' API speaks TLS (tls.http), the
	// scheme of other agents' HTTPAddr, which is host:port as in Nomad.
	// Empty means http.
	scheme string
	// routes lists every "METHOD /pattern" handler registers, so a test
	// can hold every route to the token checks (http_acl_check.go).
	routes []string
	// parser evaluates job files for /v1/jobs/parse; nil means the shared
	// default (see jobParser).
	parser *jobParser
	// telemetry is the agent's metrics, for /v1/metrics (http_metrics.go).
	telemetry *telemetry.Telemetry
	// bodyTimeout bounds how long a request body may take to arrive; 0
	// means defaultBodyTimeout (see bodyDeadline).
	bodyTimeout time.Duration
}

func (s *httpAPI) config() *config.Config { return s.info().Config }

// apiFunc handles one request. It returns the value to encode as JSON (an
// untyped nil writes no body; a typed nil pointer writes `null`, which is
// what Nomad sends for "no such object" on some reads) or an error, which
// errorStatus maps to a status code.
type apiFunc func(w http.ResponseWriter, r *http.Request) (any, error)

func (s *httpAPI) handler() http.Handler {
	mux := http.NewServeMux()
	s.routes = nil
	s.routeJobs(mux)
	s.routeNodes(mux)
	s.routeNodePools(mux)
	s.routeAllocs(mux)
	s.routeEvals(mux)
	s.routeDeployments(mux)
	s.routeStatus(mux)
	s.routeAgent(mux)
	s.routeOperator(mux)
	s.routeClient(mux)
	s.routeSearch(mux)
	s.routeMembership(mux)
	s.routeACL(mux)
	// Native service registrations (issue 13, services).
	s.routeServices(mux)
	// Web UI (issue 15).
	s.routeUI(mux)
	// metrics (issue 15)
	s.routeMetrics(mux)
	// Event stream (issue 15, events).
	s.routeEvents(mux)
	return s.bodyDeadline(mux)
}

// handle registers f for each method on pattern. Its request body is
// bounded by limits.http_max_body_size.
func (s *httpAPI) handle(mux *http.ServeMux, pattern string, f apiFunc, methods ...string) {
	h := s.wrap(f, s.bodyLimit)
	for _, m := range methods {
		s.handleFunc(mux, m+" "+pattern, h)
	}
}

// handleFunc registers a handler that writes its own answer (streams,
// proxies) for "METHOD /pattern", and records the route.
func (s *httpAPI) handleFunc(mux *http.ServeMux, route string, h http.HandlerFunc) {
	s.routes = append(s.routes, route)
	mux.HandleFunc(route, h)
}

// handleJob is handle for the endpoints whose body is a job (register,
// plan, validate, parse): their bodies are bounded by the job size limit
// instead (jobBodyLimit).
func (s *httpAPI) handleJob(mux *http.ServeMux, pattern string, f apiFunc, methods ...string) {
	h := s.wrap(f, s.jobBodyLimit)
	for _, m := range methods {
		s.handleFunc(mux, m+" "+pattern, h)
	}
}

// Method sets used by routes: Nomad's client writes with PUT, curl users
// with POST, and Nomad accepts both.
var (
	read  = []string{http.MethodGet}
	write = []string{http.MethodPut, http.MethodPost}
)

func (s *httpAPI) wrap(f apiFunc, limit func() bodyLimit) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := limitBody(w, r, limit()); err != nil {
			s.writeError(w, r, err)
			return
		}
		obj, err := f(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if obj == nil {
			return
		}
		s.writeJSON(w, r, obj)
	}
}

func (s *httpAPI) writeJSON(w http.ResponseWriter, r *http.Request, obj any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	if _, pretty := r.URL.Query()["pretty"]; pretty {
		enc.SetIndent("", "    ")
	}
	if err := enc.Encode(obj); err != nil {
		s.logger.Error("encoding HTTP response failed", "path", r.URL.Path, "error", err)
	}
}

// writeError writes err as plain text with the status it maps to. Server
// errors are logged; caller errors are the caller's business.
func (s *httpAPI) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := errorStatus(err)
	msg := err.Error()
	if code == http.StatusNotImplemented && isMissingMethod(err) {
		msg = fmt.Sprintf("%s is not implemented by this server yet (%v)", r.URL.Path, err)
	}
	if code >= 500 {
		s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err, "code", code)
	} else {
		s.logger.Debug("request rejected", "method", r.Method, "path", r.URL.Path, "error", err, "code", code)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, msg)
}

// call makes an RPC for the HTTP request r: it ends when r's client goes
// away, and it names r's client to the servers (rpcx.Peer), which count
// blocking queries per client. The peer always has an address, even one
// that is not host:port: an in-process call without one is the server's
// own work, which acts with a server's authority (nomad's isOwnCall),
// and an HTTP request never may.
func (s *httpAPI) call(r *http.Request, method string, args, reply any) error {
	peer := rpcx.Peer{Addr: httpClientAddr{r.RemoteAddr}}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		peer.Addr = net.TCPAddrFromAddrPort(ap)
	}
	err := s.rpc.RPC(rpcx.WithPeer(r.Context(), peer), method, args, reply)
	if legacy := rpcx.LegacyRemoteError(err); legacy != nil {
		// A server that sends no error codes: its sentinels are
		// recognised by their text (see rpcx.RemoteError).
		return legacy
	}
	return err
}

// httpClientAddr is the address of an HTTP client that is not host:port
// (a unix socket's, or none at all).
type httpClientAddr struct{ addr string }

func (a httpClientAddr) Network() string { return "http" }

func (a httpClientAddr) String() string {
	if a.addr == "" {
		return "an HTTP client"
	}
	return a.addr
}

// decodeBody reads a JSON request body into out. Unknown fields are
// ignored, as Nomad does, so newer clients keep working; a malformed body
// is a 400 that says where it went wrong.
func decodeBody(r *http.Request, out any) error {
	if r.Body == nil {
		return errEmptyBody
	}
	err := json.NewDecoder(r.Body).Decode(out)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var coded *codedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &coded):
		return coded
	case errors.Is(err, io.EOF):
		return errEmptyBody
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body is not valid JSON: it ends before the value is complete")
	case errors.As(err, &syn):
		return badRequest("request body is not valid JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		return badRequest("request body: field %q: cannot use a JSON %s as %s", typ.Field, typ.Value, typ.Type)
	}
	return badRequest("request body: %v", err)
}

// optionalBody decodes a body when there is one: several write endpoints
// take an optional body whose fields also come from the path.
func optionalBody(r *http.Request, out any) error {
	if r.ContentLength == 0 {
		return nil
	}
	err := decodeBody(r, out)
	if errors.Is(err, errEmptyBody) {
		return nil
	}
	return err
}

// errEmptyBody is decodeBody's answer to a request without a body, which
// optionalBody lets through.
var errEmptyBody = &codedError{code: http.StatusBadRequest, msg: "request body is empty (expected JSON)"}

// routeList is every "METHOD /pattern" the API serves, in the order the
// routes are registered.
func (s *httpAPI) routeList() []string {
	s.handler()
	return append([]string(nil), s.routes...)
}

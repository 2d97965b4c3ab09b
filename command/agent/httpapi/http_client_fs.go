package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/drover-sched/drover/structs"
)

// Requests only the agent running an allocation can answer: its task logs
// and its resource usage. Any agent accepts them; one that does not run
// the allocation forwards the request over HTTP to the agent that does,
// found through the node's HTTPAddr (which every client registers).

// forwardedHeader marks a forwarded request, so a request is forwarded at
// most once even if the servers' view of the allocation's node is stale.
const forwardedHeader = "X-Drover-Forwarded"

func (s *httpAPI) routeClient(mux *http.ServeMux) {
	s.handleFunc(mux, "GET /v1/client/fs/logs/{alloc}", s.clientLogs)
	s.handleFunc(mux, "GET /v1/client/allocation/{alloc}/stats", s.clientAllocStats)
	// Restart, signal and GC (http_client_actions.go), the alloc dir
	// (http_client_files.go), the host (http_client_stats.go).
	for _, m := range write {
		s.handleFunc(mux, m+" /v1/client/allocation/{alloc}/restart", s.clientAllocRestart)
		s.handleFunc(mux, m+" /v1/client/allocation/{alloc}/signal", s.clientAllocSignal)
		s.handleFunc(mux, m+" /v1/client/allocation/{alloc}/gc", s.clientAllocGC)
	}
	// Nomad's client collects with a GET.
	s.handleFunc(mux, "GET /v1/client/allocation/{alloc}/gc", s.clientAllocGC)
	s.handleFunc(mux, "GET /v1/client/fs/ls/{alloc}", s.clientFSList)
	s.handleFunc(mux, "GET /v1/client/fs/stat/{alloc}", s.clientFSStat)
	s.handleFunc(mux, "GET /v1/client/fs/cat/{alloc}", s.clientFSCat)
	s.handleFunc(mux, "GET /v1/client/fs/readat/{alloc}", s.clientFSReadAt)
	s.handleFunc(mux, "GET /v1/client/stats", s.clientStats)
	// Service checks (issue 13, health): http_client_checks.go.
	s.handleFunc(mux, "GET /v1/client/allocation/{alloc}/checks", s.clientAllocChecks)
}

// logParams are the query parameters of /v1/client/fs/logs/:alloc.
type logParams struct {
	task, logType, origin string
	offset                int64
	follow, plain         bool
}

func parseLogParams(r *http.Request) (logParams, error) {
	q := r.URL.Query()
	p := logParams{task: q.Get("task"), logType: q.Get("type"), origin: q.Get("origin")}
	if p.task == "" {
		return p, badRequest("task is required (?task=<name>)")
	}
	if p.logType != "stdout" && p.logType != "stderr" {
		return p, badRequest("type %q must be stdout or stderr", p.logType)
	}
	switch p.origin {
	case "":
		p.origin = "start"
	case "start", "end":
	default:
		return p, badRequest("origin %q must be start or end", p.origin)
	}
	if off := q.Get("offset"); off != "" {
		n, err := strconv.ParseInt(off, 10, 64)
		if err != nil || n < 0 {
			return p, badRequest("offset %q must be a non-negative integer", off)
		}
		p.offset = n
	}
	var err error
	if p.follow, err = boolParam(r, "follow"); err != nil {
		return p, err
	}
	p.plain, err = boolParam(r, "plain")
	return p, err
}

func (s *httpAPI) clientLogs(w http.ResponseWriter, r *http.Request) {
	p, err := parseLogParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	allocID, local, err := s.locateAlloc(w, r, capsLogs)
	if err != nil || !local {
		if err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	rc, err := s.client.AllocLogs(allocID, p.task, p.logType, p.origin, p.offset, p.follow)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	closer := &onceCloser{rc: rc}
	defer closer.Close()

	// A followed log blocks in Read until more output comes; closing the
	// reader when the caller goes away is what ends the request.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-r.Context().Done():
			closer.Close()
		case <-done:
		}
	}()
	defer wg.Wait()
	defer close(done)

	file := fmt.Sprintf("alloc/logs/%s.%s", p.task, p.logType)
	if p.plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	// Send the headers now: a follower waiting for output must not wait
	// for the response to begin too.
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	streamLogs(w, closer, p, file)
}

// streamFrame is one frame of Nomad's framed log stream: a chunk of the
// file (base64 in JSON) and the offset just after it.
type streamFrame struct {
	Offset    int64
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// streamLogs copies the log to w, raw when plain, else as a sequence of
// JSON frames, flushing each chunk so a follower sees output at once.
func streamLogs(w http.ResponseWriter, rc io.Reader, p logParams, file string) {
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	offset := p.offset
	if p.origin == "end" {
		offset = 0
	}
	buf := make([]byte, 32*1024)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			offset += int64(n)
			var werr error
			if p.plain {
				_, werr = w.Write(buf[:n])
			} else {
				werr = enc.Encode(streamFrame{Offset: offset, Data: buf[:n], File: file})
			}
			if werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *httpAPI) clientAllocStats(w http.ResponseWriter, r *http.Request) {
	allocID, local, err := s.locateAlloc(w, r, capsAllocRead)
	if err != nil || !local {
		if err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	stats, err := s.client.AllocStats(allocID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, stats)
}

// locateAlloc finds the allocation named in the path (an ID or a prefix)
// for a client request that needs one of caps. It reports local when this
// agent's client runs it, after checking the token here; otherwise it has
// already forwarded the request to the agent that runs it (and written
// the answer), or returns why it could not.
//
// An allocation this agent's client runs is checked here alone, with the
// client's own copy of it: this is the agent a forwarded request ends at,
// and anyone can reach it directly. Any other is located by the servers
// (Alloc.Locate), which check the token for caps in the allocation's
// namespace, so that a token that may read logs needs neither read-job
// nor node read to be sent to them.
func (s *httpAPI) locateAlloc(w http.ResponseWriter, r *http.Request, caps []string) (string, bool, error) {
	id := r.PathValue("alloc")
	if s.client != nil && len(id) >= fullIDLen {
		if alloc := s.client.LocalAlloc(id); alloc != nil {
			if _, err := s.allowNamespaceOp(r, alloc.Namespace, caps...); err != nil {
				return "", false, err
			}
			return alloc.ID, true, nil
		}
	}
	if r.Header.Get(forwardedHeader) != "" {
		return "", false, notFound("allocation %s is not running on this agent's node", id)
	}
	args := structs.AllocLocateRequest{AllocID: id, Capabilities: caps}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return "", false, err
	}
	args.MinQueryIndex, args.MaxQueryTime = 0, 0
	var loc structs.AllocLocateResponse
	if err := s.call(r, "Alloc.Locate", &args, &loc); err != nil {
		return "", false, err
	}
	if s.client != nil && loc.NodeID == s.client.NodeID() {
		return loc.AllocID, true, nil
	}
	return loc.AllocID, false, s.proxyToNode(w, r, loc.NodeID, loc.NodeHTTPAddr, loc.NodeStatus)
}

// forwardToNode proxies the request to the HTTP API of the agent on node,
// streaming the answer back as it comes. Reading the node's address needs
// the token's node read, which is what its callers need anyway.
func (s *httpAPI) forwardToNode(w http.ResponseWriter, r *http.Request, nodeID string) error {
	args := structs.NodeSpecificRequest{NodeID: nodeID}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return err
	}
	args.MinQueryIndex, args.MaxQueryTime = 0, 0
	var out structs.SingleNodeResponse
	if err := s.call(r, "Node.GetNode", &args, &out); err != nil {
		return err
	}
	if out.Node == nil {
		return notFound("node %s of the allocation not found", nodeID)
	}
	return s.proxyToNode(w, r, nodeID, out.Node.HTTPAddr, out.Node.Status)
}

// proxyToNode proxies the request to the HTTP API at httpAddr, the agent
// of node nodeID (whose status names the likely cause of a failure).
func (s *httpAPI) proxyToNode(w http.ResponseWriter, r *http.Request, nodeID, httpAddr, status string) error {
	if nodeID == "" {
		return notFound("the allocation is not placed on a node")
	}
	addr := httpAddr
	if addr == "" {
		return fmt.Errorf("node %s has no HTTP address; cannot reach its client", nodeID)
	}
	if !strings.Contains(addr, "://") {
		scheme := s.scheme
		if scheme == "" {
			scheme = "http"
		}
		addr = scheme + "://" + addr
	}
	target, err := url.Parse(addr)
	if err != nil {
		return fmt.Errorf("node %s has a bad HTTP address %q: %w", nodeID, httpAddr, err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(forwardedHeader, "1")
		},
		Transport:     s.forward.Transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The node's status tells an operator whether to expect this
			// (a down or disconnected node) or to look at the network.
			s.writeError(w, r, fmt.Errorf("forwarding to node %s (status %s) at %s: %w", nodeID, status, httpAddr, err))
		},
	}
	proxy.ServeHTTP(w, r)
	return nil
}

// onceCloser lets the request and its watcher both close the log reader.
type onceCloser struct {
	rc   io.ReadCloser
	once sync.Once
	err  error
}

func (c *onceCloser) Read(p []byte) (int, error) { return c.rc.Read(p) }

func (c *onceCloser) Close() error {
	c.once.Do(func() { c.err = c.rc.Close() })
	if errors.Is(c.err, io.EOF) {
		return nil
	}
	return c.err
}

package httpapi

import (
	"net/http"
)

func (s *httpAPI) routeMetrics(mux *http.ServeMux) {
	s.handleFunc(mux, "GET /v1/metrics", s.metrics)
}

// metrics answers Nomad's /v1/metrics: the agent's metrics of the last
// finished aggregation interval in Nomad's JSON shape, or, with
// ?format=prometheus and telemetry { prometheus_metrics = true }, the
// Prometheus text format. Nomad asks for no token here; Drover asks for
// agent read when ACLs are on, because the metrics name jobs, allocations
// and nodes (Prometheus sends a token as a bearer token with its
// scrape config's authorization block).
func (s *httpAPI) metrics(w http.ResponseWriter, r *http.Request) {
	if err := s.allowAgent(r, false); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.telemetry == nil {
		s.writeError(w, r, &codedError{code: http.StatusNotImplemented, msg: "this agent keeps no metrics"})
		return
	}
	switch format := r.URL.Query().Get("format"); format {
	case "":
		summary, err := s.telemetry.Summary()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, summary)
	case "prometheus":
		h := s.telemetry.PrometheusHandler()
		if h == nil {
			// Nomad's status and text, then what to do about it.
			s.writeError(w, r, &codedError{code: http.StatusUnsupportedMediaType,
				msg: "Prometheus is not enabled: set telemetry { prometheus_metrics = true } in the agent's configuration"})
			return
		}
		h.ServeHTTP(w, r)
	default:
		s.writeError(w, r, badRequest("format %q is not a metrics format: use format=prometheus, or no format for JSON", format))
	}
}

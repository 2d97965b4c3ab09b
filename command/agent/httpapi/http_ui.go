package httpapi

import (
	"fmt"
	"net/http"

	"github.com/drover-sched/drover/ui"
)

// routeUI serves the web UI at /ui/ and sends the agent's root there, as
// Nomad's agent does, so the links Nomad's CLI prints
// (/ui/jobs/<id>@<ns>, /ui/allocations/<id>, /ui/clients) land on pages.
//
// These routes are not in s.routes, the API's route list that the token
// checks are held to: they serve the same embedded files to everyone and
// read no state. The pages read the API with the token the user gives
// them, and the API checks it.
func (s *httpAPI) routeUI(mux *http.ServeMux) {
	h, err := ui.New()
	if err != nil {
		// The assets are compiled in; failing to read them is a broken
		// build, not a condition to run with.
		panic(fmt.Sprintf("agent: web UI: %v", err))
	}
	mux.Handle("GET "+ui.Prefix, h)
	mux.HandleFunc("GET /{$}", ui.Redirect)
}

// Package ui serves Drover's web UI: a small single-page application of
// plain JavaScript modules and one stylesheet, embedded in the binary (an
// embed.FS) so that an agent needs nothing from the internet and `go build`
// needs no JavaScript toolchain. The agent mounts Handler at /ui/.
//
// The browser side lives in assets/: index.html loads js/app.js, which
// routes the URL paths Nomad's UI uses (/ui/jobs, /ui/jobs/<id>@<ns>,
// /ui/allocations/<id>, /ui/clients, /ui/clients/<id>, /ui/servers,
// /ui/evaluations) to one module per page in js/pages/. Every page reads
// the v1 HTTP API with the token the user typed (kept in localStorage,
// sent as X-Nomad-Token) and keeps itself current with blocking queries
// (js/live.js), so links printed by Nomad's CLI land on real pages and
// the pages update without a reload.
//
// The Go side is only a file server with three rules: any path under
// /ui/ that is not an asset answers index.html (so deep links load the
// application, which then routes in the browser), every answer carries a
// strict Content-Security-Policy (scripts, styles and requests from this
// origin only, no inline code, no framing), and assets are sent gzipped
// to browsers that accept it, compressed once at start.
package ui

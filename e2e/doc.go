// Package e2e holds end-to-end tests that run real Drover agent processes
// (the built binary) on loopback and drive them through the HTTP API and
// the CLI, the way users meet Drover. They are behind the e2e build tag:
// run them with `make e2e`, which builds bin/drover first.
package e2e

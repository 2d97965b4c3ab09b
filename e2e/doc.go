// Package e2e holds end-to-end tests that run real Drover agent processes
// (the built binary) on loopback and drive them through the HTTP API and
// the CLI, the way users meet Drover. They are behind the e2e build tag:
// run them with `make e2e`, which builds bin/drover first.
//
// Most tests start agents as children of `go test`. The nested-agent tests
// (nested_*_test.go) go one level further: an outer cluster runs inner
// client agents as raw_exec jobs, each in a datacenter of its own, and the
// test disconnects them through Drover (alloc signal, alloc restart, job
// stop and run, a killed process brought back by the outer restart
// policy), so a disconnect is made the way an operator could make one.
package e2e

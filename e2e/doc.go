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
//
// The netns_*_test.go tests put every agent in a network namespace of its
// own (10.213.0.0/16, a /24 per test) and make partitions by cutting links
// and routing while every process keeps running. They need root and the
// ip command, and skip with the reason otherwise. netns_soak_test.go is
// behind the soak build tag as well: `make soak`.
package e2e

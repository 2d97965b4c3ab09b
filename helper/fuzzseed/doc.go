// Package fuzzseed gives Drover's fuzz targets (`go test -fuzz`, run by
// `make fuzz`) their seed corpora and their measurements.
//
// Seeds are the real inputs the repository already has: job files in
// examples/ and testdata/, and the job files, JSON bodies and config
// snippets written inline in tests, which GoStringLiterals pulls out of the
// test sources so that every new test input becomes a seed without anyone
// copying it. A fuzzer starting from real inputs reaches deep code (the job
// decoder behind a well-formed file, the codec behind a well-formed header)
// in seconds instead of hours.
//
// AllocatedBytes measures what an input cost, so a target can assert that
// no input makes the code under test allocate more than a bound
// proportional to the input: the property that keeps a hostile request from
// taking a process down.
//
// The package is imported only by tests.
package fuzzseed

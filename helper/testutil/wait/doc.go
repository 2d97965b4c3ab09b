// Package wait is the one way Drover's tests wait for something another
// goroutine or process makes true.
//
// A test that must see a condition hold (a leader elected, an alloc
// running, a connection closed) polls it with a deadline instead of
// sleeping: it returns as soon as the condition holds, and fails with a
// message that says what never happened. Every package's tests, the e2e
// suite included, use this package, so a change to how tests wait (the
// interval, the failure text, a fake clock stepped between checks) is made
// once.
//
// For is for conditions that can say why they do not hold yet; Until is for
// plain booleans with a description; Poll is the loop under both, for the
// rare test that must not fail when the condition never holds (it asserts
// the opposite). Options change the interval and add a step between checks,
// for example to advance a fake clock until a loop reaches its goal.
//
// The package has no state and starts no goroutines.
package wait

// Package clock is the time source of every client loop: heartbeats, alloc
// update batching, restart delays, kill timeouts, GC and log following.
//
// Client code never calls time.Now, time.After or time.Sleep directly; it
// asks a Clock. Production code uses Real; tests use Fake and move time
// forward explicitly with Advance, after waiting (BlockUntil) for the loop
// under test to be parked on the clock. That makes a test of "restart after
// 15 s" or "stop the alloc after 30 s without a heartbeat" run instantly
// and deterministically, without time.Sleep.
//
// Ownership: a Fake's waiters list is guarded by its mutex; any goroutine
// may call any method.
package clock

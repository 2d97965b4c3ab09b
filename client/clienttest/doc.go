// Package clienttest has an in-process fake of the five server RPCs a client
// uses, so the client can be tested end to end without a real server:
// Node.Register, Node.UpdateStatus, Node.GetClientAllocs (a blocking query),
// Alloc.GetAllocs and Node.UpdateAlloc.
//
// It checks node identity as the real server does: every call but a first
// registration must carry the node's SecretID (structs.Node.CheckSecret),
// an update may name only allocations placed on the calling node, and a
// node reading allocations is answered only its own.
//
// The fake keeps one raft-like index that every change bumps, applies
// client updates through structs' state machine (so an invalid transition
// fails the test), and can be told to fail: all calls (network down), only
// UpdateAlloc with "node is not ready", or heartbeats with "not found".
// It can also queue canned responses, to play a stale follower.
//
// All state is guarded by one mutex; blocking queries wait on a channel
// that is closed and replaced on every change.
//
// The client package's TestFakeServerBehavesLikeTheRealServer runs one
// client scenario (register, run an alloc, have the server stop it, and
// calls made with another node's secret) against this fake and against a
// real in-process server, and requires the same outcome: change the fake
// or the server's node endpoints, and that test says whether they still
// agree.
//
// Config is a client's test configuration, wired to a new fake unless the
// test names a server. Only tests import this package: the drover binary
// carries no test code (binary_deps_test.go at the module root).
package clienttest

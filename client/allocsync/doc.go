// Package allocsync holds the rules by which a client learns its
// allocations from the servers and reports on them, shared by the real
// client (client/watcher.go, client/updater.go) and the node simulator
// (client/nodesim), so that a simulated node speaks the protocol exactly
// as a real one does and a change to the rules reaches both.
package allocsync

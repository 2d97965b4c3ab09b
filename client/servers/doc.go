// Package servers keeps the client's list of server addresses and sends
// each RPC to the first one that answers.
//
// Any server can answer a client: followers forward writes to the leader
// and serve reads themselves. So the manager only needs a server that is
// reachable. It tries them in order; one that fails (a transport error, or
// a server that knows no leader) moves to the end of the list, so the next
// call starts with one that worked. When none answers, the caller (the
// heartbeat or alloc watcher loop) backs off with jitter and tries again.
//
// Concurrency: the list is guarded by a mutex; RPC may be called from any
// goroutine and several calls may be in flight.
package servers

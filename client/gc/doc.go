// Package gc removes the directories of terminal allocations from a
// client's disk.
//
// A terminal alloc's directory is kept after it stops, so that its logs can
// still be read (`alloc logs`) and a replacement could migrate its data.
// The collector removes such directories, oldest first:
//
//   - when they are older than AllocDirTTL (if set);
//   - while the client holds more than MaxAllocs allocs, live or terminal;
//   - while the data dir's disk (or inode) usage is above its threshold.
//
// A pass destroys at most MaxPerPass allocs, so a client with a large
// backlog catches up over a few passes instead of stalling, and passes run
// on a jittered interval so a fleet of clients does not hit its disks in
// step (DESIGN.md promise 3).
//
// Ownership: the Collector's goroutine is Run; the set of eligible allocs is
// guarded by a mutex so that the client may Mark and Remove from any
// goroutine. Destroy callbacks run on the collector's goroutine (or the
// caller of Collect).
package gc
